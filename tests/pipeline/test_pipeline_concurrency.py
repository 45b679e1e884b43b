"""Two `envgen build` of one profile at the same time (issue #12): the second waits for the first
("waiting for another build of PROFILE (pid N)"), then finds the image the first validated; one image,
one validation record, one build log per build that ran, no temporary state files left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.pipeline.buildlock import build_lock, lock_path
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

NAME = "pipe-concurrent"


def test_lock_says_whom_it_waits_for(tmp_path: Path) -> None:
    held, release, said = threading.Event(), threading.Event(), []

    def holder() -> None:
        with build_lock(tmp_path, "p"):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    with build_lock(tmp_path, "p", echo=said.append) as path:
        waited = time.monotonic() - started
        assert path == lock_path(tmp_path, "p")
        assert path.read_text().strip() == str(os.getpid())
    thread.join()
    assert waited >= 0.4
    assert said == [f"waiting for another build of p (pid {os.getpid()}) to finish; lock: {path}"]
    with build_lock(tmp_path, "q", echo=said.append):  # another profile: no wait
        pass
    assert len(said) == 1


def test_two_concurrent_builds_of_one_profile(envgen_home: Path, write_profile: Callable[[str, str], str],
                                              cleanup_tags: list[str], docker_client: DockerClient) -> None:
    write_profile(NAME, minimal_profile('"six==1.16.0"'))
    cmd = [sys.executable, "-m", "envgen", "build", NAME]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The second starts once the first holds the lock (its pid is written into the lock file).
    locks = envgen_home / "state" / "build-locks"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(
            p.read_text().strip() == str(first.pid) for p in locks.glob(f"{NAME}.lock")):
        time.sleep(0.1)
    second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out1, err1 = first.communicate(timeout=900)
    out2, err2 = second.communicate(timeout=900)
    assert first.returncode == 0, err1[-3000:]
    assert second.returncode == 0, err2[-3000:]
    assert f"waiting for another build of {NAME} (pid {first.pid})" in out2 + err2
    assert "is up to date" in out2 and "validated" in out2, out2
    tag = next(line.split()[1] for line in out1.splitlines() if line.startswith("built "))
    cleanup_tags += [tag, alias(NAME)]
    assert tag.startswith(os.environ["ENVGEN_NAMESPACE"] + "/")
    # One image for the profile, validated once; one build log for the build that ran.
    repo = tag.split(":")[0]
    images = [img for img in docker_client.images.list() if any(t.startswith(repo + ":") for t in img.tags)]
    assert len(images) == 1 and set(images[0].tags) == {tag, alias(NAME)}
    state = envgen_home / "state"
    records = [json.loads(p.read_text()) for p in (state / "validations").glob("*.json")]
    assert [r["image_id"] for r in records if r["profile"] == NAME].count(images[0].id) == 1
    logs = sorted((state / "logs").glob(f"{NAME}-*.log"))
    assert len(logs) == 1 and f"{logs[0]}" in out1
    assert not list(state.rglob(".tmp-*"))
