"""Pipeline tests: `envgen build/smoke/run/push/pull/images` against the real engine and registry.

Each test module gets its own envgen state directory and user-profile directory; every test here
carries the `docker` marker (and so fails, never skips, under CI=true when the engine is missing).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import session_namespace

if TYPE_CHECKING:
    from docker import DockerClient



@pytest.fixture(scope="module")
def envgen_home(tmp_path_factory: pytest.TempPathFactory, docker_client: DockerClient) -> Iterator[Path]:
    """ENVGEN_CONFIG and ENVGEN_PROFILE_PATH pointing into a fresh directory for this module."""
    home = tmp_path_factory.mktemp("envgen-home")
    (home / "profiles").mkdir()
    (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ENVGEN_CONFIG", str(home / "config.yaml"))
        mp.setenv("ENVGEN_PROFILE_PATH", str(home / "profiles"))
        yield home


@pytest.fixture(scope="module")
def write_profile(envgen_home: Path) -> Callable[[str, str], str]:
    """Write a user profile into the module's profile directory; returns its name."""

    def write(name: str, body: str) -> str:
        (envgen_home / "profiles" / f"{name}.yaml").write_text(
            f"name: {name}\n" + textwrap.dedent(body), encoding="utf-8")
        return name

    return write


def pushed_ref(message: str) -> tuple[str, str]:
    """(remote tag, digest) from `envgen push`'s line: "... REGISTRY/PROFILE:HASH@sha256:... (validated: tier)"."""
    pinned = next(word for word in message.split() if "@sha256:" in word)
    ref, digest = pinned.split("@")
    return ref, digest


def alias(name: str) -> str:
    """The ``:latest`` alias envgen gives a profile's image in this session's namespace."""
    return f"{session_namespace()}/{name}:latest"


def publish_registry(local_registry: str) -> str:
    """Where pipeline tests publish: the session's namespace on the local registry."""
    return f"{local_registry}/{session_namespace()}"


MINIMAL = """\
description: pipeline test profile
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.11"
gpu: {required: false}
smoke: {matmul_size: 128, train_steps: 2}
packages:
  pip: [PIPS]
"""


def minimal_profile(pips: str) -> str:
    return MINIMAL.replace("PIPS", pips)


def built_base(write_profile: Callable[[str, str], str], cleanup_tags: list[str], name: str, pips: str) -> str:
    """A minimal envgen image holding ``pips``, for profiles on top of it (base_provides): its ``:latest`` alias."""
    from envgen.pipeline.build import build

    outcome = build(write_profile(name, minimal_profile(pips)))
    cleanup_tags.extend([outcome.tag, alias(name)])
    return alias(name)


def adopt_on_local_base(envgen_home: Path, source: Path, name: str, options: list[str]) -> Path:
    """``envgen init --from SOURCE`` written as profile ``name`` on the local Debian 12 base (this host reaches no
    image registry, so the profile says local_base: true); the profile's path."""
    from typer.testing import CliRunner

    from envgen.cli import app

    out = envgen_home / "profiles" / f"{name}.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(source), "-o", str(out), "--base", "debian:bookworm-slim",
                                      *options])
    assert result.exit_code == 0, result.output
    out.write_text(out.read_text(encoding="utf-8") + "local_base: true  # made here: no registry reachable\n",
                   encoding="utf-8")
    return out


def plain_imports(client: DockerClient, image: str, args: list[str]) -> dict[str, str | None]:
    """tests/pipeline/plain_imports.py run by ``image``'s Python with ``args`` (distributions, or ``--modules M
    ...``): {module: None (imported), "extra: ..." or its error's last line}."""
    import json

    from envgen.suggest.adopt.image import run_script

    result = run_script(client, image, Path(__file__).resolve().parent / "plain_imports.py", " ".join(args),
                        timeout_s=900)
    assert result.exit_code == 0, result.output[-2000:]
    parsed: dict[str, str | None] = json.loads(result.output.strip().splitlines()[-1])
    return parsed


@pytest.fixture(scope="module")
def cleanup_tags(docker_client: DockerClient) -> Iterator[list[str]]:
    """Tags a test created; removed at the end of the module."""
    from envgen.docker import remove_image

    tags: list[str] = []
    yield tags
    for tag in tags:
        remove_image(docker_client, tag, force=True)
