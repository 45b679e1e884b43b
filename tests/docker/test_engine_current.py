"""scripts/engine-current beside the host's engine: it starts Docker >= 26 with CDI on its own socket, and the
host's engine still runs containers on its docker0 bridge after the second engine started and after it stopped
(a second dockerd started with `--bridge=none` once deleted docker0: ../shared/field-notes.md)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from docker import DockerClient

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "engine-current"


def _script(action: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done


def _host_engine_runs_a_container(docker_client: DockerClient) -> None:
    assert subprocess.run(["ip", "link", "show", "docker0"], capture_output=True, check=False).returncode == 0
    out = docker_client.containers.run("debian:bookworm-slim", ["echo", "host-engine-ok"], remove=True)
    assert out == b"host-engine-ok\n"


def test_a_current_engine_starts_beside_the_host_engine_and_leaves_it_alone(docker_client: DockerClient) -> None:
    from envgen.docker import connect
    from envgen.docker.engine import engine_info
    from envgen.errors import DockerUnavailable

    printed = _script("start").stdout.strip()
    exports = dict(word.split("=", 1) for word in shlex.split(printed.removeprefix("export ")))
    assert exports["DOCKER_HOST"] == "unix:///run/envgen-engine-current/docker.sock"
    assert (Path(exports["DOCKER_CONFIG"]) / "cli-plugins" / "docker-buildx").exists()
    current = connect(exports["DOCKER_HOST"])
    try:
        engine = engine_info(current)
        assert engine.kind == "docker" and engine.major >= 26 and engine.containerd_store
        assert "/var/lib/envgen-engine-current/cdi" in (current.info().get("CDISpecDirs") or [])
    finally:
        current.close()
    assert docker_client.version()["Version"] != engine.version  # two engines, not one
    _host_engine_runs_a_container(docker_client)
    _script("stop")
    with pytest.raises(DockerUnavailable):
        connect(exports["DOCKER_HOST"]).close()
    _host_engine_runs_a_container(docker_client)
    _script("start")  # as the suite found it: scripts/test runs the engine tests on it next
