"""Podman behind the Docker API: the engine named from its /version answer, its builder chosen, and buildah's
build output read into steps (recorded real outputs: tests/fixtures/engines/README.md)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from envgen.docker.build import cli_command
from envgen.docker.builder import detect_builder
from envgen.docker.buildlog import BuildahParser, short_error
from envgen.docker.engine import EngineInfo, engine_from_version
from envgen.docker.progress import StepEvent
from envgen.errors import InputError
from envgen.host.parse import parse_docker_info

ENGINES = Path(__file__).parents[1] / "fixtures" / "engines"
PODMAN = ENGINES / "podman-4.3.1"
PODMAN_ENGINE = EngineInfo("podman", "4.3.1", "1.41")


def _parse(name: str) -> tuple[BuildahParser, list[StepEvent], list[str]]:
    events: list[StepEvent] = []
    parser = BuildahParser(events.append)
    shown = [text for line in (PODMAN / name).read_text().splitlines() if (text := parser.feed(line)) is not None]
    return parser, events, shown


def test_podman_is_named_from_its_version_components() -> None:
    podman = engine_from_version(json.loads((PODMAN / "version.json").read_text()))
    docker = engine_from_version(json.loads((ENGINES / "docker-version-20.10.json").read_text()))
    assert (podman.kind, podman.name, podman.version) == ("podman", "Podman", "4.3.1")
    assert (docker.kind, docker.version) == ("docker", "20.10.24+dfsg1")


def test_podman_info_gets_the_cdi_directories_it_always_reads() -> None:
    version = json.loads((PODMAN / "version.json").read_text())
    info = parse_docker_info(json.dumps({"ServerVersion": "4.3.1", "CDISpecDirs": None,
                                         "Components": version["Components"]}))
    assert info.engine == "podman"
    assert info.cdi_spec_dirs == ("/etc/cdi", "/var/run/cdi")
    assert parse_docker_info(json.dumps({"ServerVersion": "20.10.24"})).engine is None


def test_buildah_output_gives_steps_and_their_output() -> None:
    parser, events, shown = _parse("build-secret-cache.txt")
    assert [s.name.split()[0] for s in parser.steps] == ["FROM", "RUN"]
    assert [(e.step, e.status) for e in events] == [(1, "start"), (1, "done"), (2, "start"), (2, "done")]
    assert shown == ["sekrit", "buildah-cache-lockfile", "uv"]
    assert parser.failed is None and parser.total() == 2


def test_buildah_cached_step_counts_as_cached() -> None:
    parser, _events, _shown = _parse("build-cached.txt")
    assert parser.cached == 1 and parser.steps[1].status == "cached"


def test_buildah_failure_names_the_step_and_its_exit_status() -> None:
    parser, _events, _shown = _parse("build-multistage-fail.txt")
    assert parser.total() == 5  # two stages: 2 + 3 steps
    assert parser.failed is not None and parser.failed.name == "RUN echo failing; exit 3"
    assert short_error(parser.error) == "exit code 3"
    assert "failing" in parser.failure_tail()


def _fake_podman(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "podman"
    script.write_text('#!/bin/sh\n[ "$1" = "--version" ] && echo "podman version 4.3.1" && exit 0\nexit 2\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_on_podman_the_podman_cli_builds_through_the_socket(tmp_path: Path) -> None:
    cli = _fake_podman(tmp_path / "bin")
    env = {**os.environ, "PATH": str(cli.parent), "DOCKER_HOST": "unix:///run/podman/podman.sock"}
    info = detect_builder(env, engine=PODMAN_ENGINE, extra_clis=())
    assert (info.kind, info.cli, info.version, info.uses_buildkit) == ("podman", str(cli), "4.3.1", True)
    cmd = cli_command(info, tmp_path, "Dockerfile", tmp_path / "iid", {"ca_bundle": tmp_path / "ca.pem"},
                      {"A": "1"}, {}, env=env)
    assert cmd[:4] == [str(cli), "--url", "unix:///run/podman/podman.sock", "build"]
    assert "--progress=plain" not in cmd and f"id=ca_bundle,src={tmp_path / 'ca.pem'}" in cmd


def test_on_podman_without_its_cli_auto_is_classic_and_buildkit_says_why(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}
    assert detect_builder(env, engine=PODMAN_ENGINE, extra_clis=()).kind == "classic"
    with pytest.raises(InputError, match="no podman CLI"):
        detect_builder(env, choice="buildkit", engine=PODMAN_ENGINE, extra_clis=())


def test_podman_create_args_carry_the_sdk_keywords_and_one_device_per_cdi_name() -> None:
    from envgen.docker.podman_run import create_args

    kwargs = {"shm_size": "8g", "environment": {"B": "2", "A": "1"}, "user": "1000:1000",
              "volumes": {"/home/u/w": {"bind": "/workspace", "mode": "rw"}}, "working_dir": "/workspace",
              "entrypoint": ["/usr/bin/env", "PATH=/opt/env/bin:/usr/bin"]}
    args = create_args("img:1", ["python", "-c", "print(1)"], kwargs, ["nvidia.com/gpu=0", "nvidia.com/gpu=1"])
    assert args == ["create", "--shm-size", "8g", "--env", "A=1", "--env", "B=2",
                    "--volume", "/home/u/w:/workspace:rw", "--workdir", "/workspace", "--user", "1000:1000",
                    "--entrypoint", '["/usr/bin/env", "PATH=/opt/env/bin:/usr/bin"]',
                    "--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=1",
                    "img:1", "python", "-c", "print(1)"]
