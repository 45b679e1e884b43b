"""`envgen run`: start a container from a validated image, after checking the host against it."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from envgen.config import load_config
from envgen.docker import connect, run_container
from envgen.errors import ImageNotValidated
from envgen.pipeline.resolve import resolve_image
from envgen.pipeline.smoke import gpus_for, parse_gpus
from envgen.pipeline.state import ValidationStore


def run(target: str, *, command: list[str], gpus: str | None = None, workdir: Path | None = None, force: bool = False,
        out: Callable[[str], object] = print, env: Mapping[str, str] | None = None) -> int:
    config = load_config(env)
    client = connect()
    image = resolve_image(client, target, env)
    record = ValidationStore(config.state_dir).get(image.id)
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
