"""`envgen run`: start a container from a validated image, after checking the host against it."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.config import load_config
from envgen.docker import connect, run_container
from envgen.errors import ImageNotValidated
from envgen.pipeline.bundle import loaded_from_bundle
from envgen.pipeline.resolve import resolve_image
from envgen.pipeline.smoke import gpus_for, parse_gpus
from envgen.pipeline.state import Validation, ValidationStore

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import ImageSummary


def _first_run_smoke(client: DockerClient, image: ImageSummary, gpus: str | None, store: ValidationStore,
                     out: Callable[[str], object]) -> Validation | None:
    from envgen.pipeline.smoke import image_profile, run_smoke

    out("smoke test: this image came from a bundle and has not been validated on this host; running it first\n")
    timeout = float(image_profile(client, image.id).get("smoke", {}).get("timeout_s", 300))
    run_smoke(client, image.id, gpus=gpus_for(image.labels, gpus),
              profile_name=image.labels.get("io.envgen.profile", ""),
              content_hash=image.labels.get("io.envgen.content-hash", ""), store=store, timeout_s=timeout)
    return store.get(image.id)


def run(target: str, *, command: list[str], gpus: str | None = None, workdir: Path | None = None, force: bool = False,
        out: Callable[[str], object] = print, env: Mapping[str, str] | None = None) -> int:
    config = load_config(env)
    client = connect()
    image = resolve_image(client, target, env)
    store = ValidationStore(config.state_dir)
    record = store.get(image.id)
    if record is None and not force and loaded_from_bundle(config.state_dir, image.id) is not None:
        # An image from an offline bundle: sealed where it was built, not validated here; its first run
        # here is preceded by the smoke test, which records the verdict for this host.
        record = _first_run_smoke(client, image, gpus, store, out)
    if not force and (record is None or not record.passed):
        state = "failed" if record else "has not passed"
        raise ImageNotValidated(
            f"image {image.tags[0] if image.tags else image.id[:19]} {state} its smoke test on this host",
            fix=f"run `envgen smoke {target}` first, or pass --force to run it anyway",
        )
    gpus = gpus_for(image.labels, gpus)
    if gpus != "none":
        from envgen.pipeline.doctor import gate_image

        gate_image(image.labels, env)
    result = run_container(
        client, image.id, command or None, gpus=parse_gpus(gpus),
        workdir=(workdir or Path.cwd()), user=f"{os.getuid()}:{os.getgid()}",
        on_output=lambda line: None if out(line + "\n") else None,
    )
    return result.exit_code
