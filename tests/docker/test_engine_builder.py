"""detect_builder(): what the installed CLIs offer, found by probing them."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from envgen.docker import detect_builder
from envgen.docker.builder import DEBIAN_CLI, docker_executables, parse_cli_version
from envgen.errors import InputError


def _fake_cli(directory: Path, version: str, buildx: bool) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "docker"
    buildx_branch = 'echo "github.com/docker/buildx v0.14.0 abc"; exit 0' if buildx else \
        'echo "docker: unknown command: docker buildx" >&2; exit 1'
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "Docker version {version}, build x"; exit 0; fi\n'
        f'if [ "$1" = "buildx" ]; then {buildx_branch}; fi\n'
        "exit 2\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def _env(*dirs: Path) -> dict[str, str]:
    return {**os.environ, "PATH": os.pathsep.join(str(d) for d in dirs)}


def test_debian_cli_gives_legacy_buildkit(unavailable: Callable[[str], NoReturn]) -> None:
    """Here: /usr/local/bin/docker 28 without buildx, and Debian's 20.10 -> DOCKER_BUILDKIT=1 on 20.10."""
    if not os.path.exists(DEBIAN_CLI):
        unavailable(f"no docker CLI at {DEBIAN_CLI} (scripts/host-setup installs one)")  # fails under CI=true
    info = detect_builder()
    if info.kind == "buildx":
        pytest.skip(f"a CLI with buildx is installed: {info.reason}")
    assert info.kind == "buildkit-legacy"
    assert info.cli == DEBIAN_CLI
    assert info.version is not None and info.version.startswith("20.10")
    assert info.uses_buildkit and "DOCKER_BUILDKIT=1" in info.reason


def test_buildx_is_preferred(tmp_path: Path) -> None:
    old = _fake_cli(tmp_path / "a", "20.10.5", buildx=False)
    new = _fake_cli(tmp_path / "b", "27.1.0", buildx=True)
    info = detect_builder(_env(old.parent, new.parent), extra_clis=())
    assert (info.kind, info.cli) == ("buildx", str(new))
    assert "buildx v0.14.0" in (info.version or "")


def test_new_cli_without_buildx_falls_back_to_classic(tmp_path: Path) -> None:
    cli = _fake_cli(tmp_path / "a", "28.2.2", buildx=False)
    env = _env(cli.parent)
    assert docker_executables(env, extra=()) == [str(cli)]
    info = detect_builder(env, extra_clis=())
    assert info.kind == "classic" and "28.2.2" in info.reason
    with pytest.raises(InputError, match="BuildKit was asked for") as err:
        detect_builder(env, choice="buildkit", extra_clis=())
    assert "--builder classic" in err.value.one_line()


def test_old_cli_gives_legacy_buildkit(tmp_path: Path) -> None:
    cli = _fake_cli(tmp_path / "a", "20.10.24+dfsg1", buildx=False)
    info = detect_builder(_env(cli.parent), extra_clis=())
    assert (info.kind, info.cli, info.version) == ("buildkit-legacy", str(cli), "20.10.24+dfsg1")


def test_explicit_classic() -> None:
    info = detect_builder(choice="classic")
    assert info.kind == "classic" and info.cli is None and not info.uses_buildkit


def test_unknown_choice() -> None:
    with pytest.raises(InputError):
        detect_builder(choice="kaniko")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Docker version 20.10.24+dfsg1, build 297e128", ("20.10.24+dfsg1", 20)),
        ("Docker version 28.2.2, build e6534b4", ("28.2.2", 28)),
        ("nonsense", None),
    ],
)
def test_parse_cli_version(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_cli_version(text) == expected
