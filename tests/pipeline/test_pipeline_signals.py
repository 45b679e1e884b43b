"""The smoke probe's container under signals, for real: `envgen smoke` runs as a subprocess and is signalled the
moment its probe container exists. SIGINT and SIGTERM: envgen removes the container and exits 130 with one line.
SIGKILL: the container stays (nothing can remove it then), carries envgen's owner label naming the dead process,
and the next envgen that starts a container removes it. Cost: a small build (cached layers: seconds), four probes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from envgen.docker import remove_image
from envgen.pipeline.build import build
from envgen.vocabulary import LABEL_OWNER
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tag(envgen_home: Path, write_profile: Callable[[str, str], str], docker_client: DockerClient) -> Iterator[str]:
    name = write_profile("signals", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    yield outcome.tag
    for ref in (outcome.tag, alias(name)):
        remove_image(docker_client, ref, force=True)


def _owned_by(client: DockerClient, pid: int) -> list[Any]:
    return [c for c in client.containers.list(all=True, filters={"label": LABEL_OWNER})
            if c.labels[LABEL_OWNER].split("/")[1] == str(pid)]


def _smoke(tag: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "envgen", "smoke", tag], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def _at_the_probe(client: DockerClient, proc: subprocess.Popen[str]) -> list[Any]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        found = _owned_by(client, proc.pid)
        if found:
            return found
        time.sleep(0.05)
    pytest.fail(f"no probe container appeared (exit {proc.poll()}): {proc.communicate()[1][-2000:]}")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_at_the_probe_removes_its_container(tag: str, docker_client: DockerClient,
                                                        signum: signal.Signals) -> None:
    proc = _smoke(tag)
    _at_the_probe(docker_client, proc)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in stderr, stderr
    assert _owned_by(docker_client, proc.pid) == []


def test_a_killed_envgens_probe_is_removed_by_the_next(tag: str, docker_client: DockerClient) -> None:
    proc = _smoke(tag)
    [container] = _at_the_probe(docker_client, proc)
    proc.kill()
    proc.communicate(timeout=60)
    left = _owned_by(docker_client, proc.pid)
    assert [c.id for c in left] == [container.id]  # SIGKILL: nothing could remove it, but it is named
    done = subprocess.run([sys.executable, "-m", "envgen", "smoke", tag], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert done.returncode == 0, done.stderr
    assert _owned_by(docker_client, proc.pid) == []
    # a live envgen's probe is never taken for an orphan: this process owns none, and its own label reads alive
    from envgen.docker.owner import _dead, owner_value

    assert not _dead(*owner_value().split("/"))


def test_a_killed_envgens_seal_container_is_removed_by_the_next(tag: str, docker_client: DockerClient) -> None:
    """The seal's container is owned by its name (a label would be committed into the image): one left by a process
    that is gone (a real process, ended) is removed; one of this live process is kept."""
    from envgen.docker.owner import _host, remove_orphans, seal_name

    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = docker_client.containers.create(tag, name=f"envgen-seal.{gone.pid}.1.{_host()}.aaaaaa")
    alive = docker_client.containers.create(tag, name=seal_name())
    try:
        assert dead.name in remove_orphans(docker_client)
        names = {c.name for c in docker_client.containers.list(all=True, filters={"name": "envgen-seal."})}
        assert dead.name not in names and alive.name in names
        image = docker_client.images.get(tag)
        assert LABEL_OWNER not in (image.labels or {})  # the sealed image carries no owner
    finally:
        alive.remove(force=True)
