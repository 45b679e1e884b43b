"""Reproducible as users build (issue #45): `envgen build cpu-smoke`, the CLI, run twice from clean under CI=true
on an engine whose BuildKit rewrites file times to SOURCE_DATE_EPOCH (Docker >= 26 with the containerd image store:
scripts/engine-current; BuilderInfo.oci_rewrite), must give final images with the same `RootFS.Layers`: the base,
the apt and environment layers, the probe's files and the seal (the probe's verdict and `pip freeze`).

"From clean", before each build: this module's state directory removed (a new one per build), the build's tags
removed, and the engine's whole build cache pruned (`docker builder prune -af`: no layer and no uv cache mount
survives). Pruning is allowed only where the build cache is the test's own: ENVGEN_TEST_OWN_BUILD_CACHE=1, which
scripts/test sets for its Docker 26 engine; the host's shared engine (Docker 20.10, whose BuildKit cannot rewrite
times) is never pruned, and there this test is unavailable (scripts/test leaves it out of that session). The first
image is kept under a tag of the test's own until the end (no build cache refers to it), so that a difference can
be shown file by file: `bench/image_diff.py` runs on the two images and its report is the failure message.

The image IDs are reported, not compared: the seal's commit writes its own time into the image config. About 10
minutes on 2 cores (two cold builds, each exported as an OCI archive with its times rewritten, then loaded).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from tests.conftest import session_namespace

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROFILE = "cpu-smoke"
OWN_CACHE_ENV = "ENVGEN_TEST_OWN_BUILD_CACHE"


def _clean(docker_client: DockerClient, state: Path) -> None:
    """No state directory, no tag of the profile in the session's namespace, no build cache."""
    from envgen.docker import remove_image

    shutil.rmtree(state, ignore_errors=True)
    for image in docker_client.images.list(name=f"{session_namespace()}/{PROFILE}"):
        for tag in image.tags:  # the profile's tags only: the first build's image stays under its own tag
            if tag.startswith(f"{session_namespace()}/{PROFILE}:"):
                remove_image(docker_client, tag, force=True)
    pruned = subprocess.run(["docker", "builder", "prune", "-af"], capture_output=True, text=True, check=False)
    assert pruned.returncode == 0, f"docker builder prune -af: {pruned.stderr.strip()}"


def _build(home: Path, n: int) -> tuple[str, float]:
    """`envgen build cpu-smoke` with this tree's envgen, CI=true, a config of its own; its output and seconds."""
    config = home / f"config{n}.yaml"
    config.write_text(f"state_dir: {home / f'state{n}'}\n", encoding="utf-8")
    env = {**os.environ, "CI": "true", "ENVGEN_CONFIG": str(config),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "envgen", "build", PROFILE], env=env, capture_output=True,
                          text=True, check=False, timeout=1500)
    seconds = time.monotonic() - began
    assert done.returncode == 0, f"envgen build {PROFILE} #{n} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert "validated: cpu" in done.stdout, done.stdout[-3000:]
    return done.stdout, seconds


def _image_diff(a: str, b: str, docker: str | None) -> str:
    shown = subprocess.run([sys.executable, str(ROOT / "bench" / "image_diff.py"), a, b, "--max-files", "30",
                            "--docker", docker or "docker"],
                           capture_output=True, text=True, check=False, timeout=1200)
    return (shown.stdout + shown.stderr)[-8000:]


def test_two_clean_envgen_builds_give_the_same_layers(
        docker_client: DockerClient, tmp_path: Path, unavailable: Callable[[str], NoReturn]) -> None:
    from envgen.docker import detect_builder, remove_image
    from envgen.docker.engine import engine_info
    from envgen.errors import InputError

    engine = engine_info(docker_client)
    try:
        builder = detect_builder(choice="buildkit", engine=engine)
    except InputError as exc:
        unavailable(exc.one_line())
    if not builder.oci_rewrite:
        unavailable(f"{builder.reason}: this BuildKit does not rewrite file times to SOURCE_DATE_EPOCH "
                    "(Docker >= 26 with the containerd image store does: scripts/engine-current)")
    if os.environ.get(OWN_CACHE_ENV) != "1":
        unavailable(f"{OWN_CACHE_ENV}=1 is not set: building from clean prunes the engine's whole build cache, "
                    "so set it only on an engine of your own (scripts/test does for its Docker 26)")
    alias, kept = f"{session_namespace()}/{PROFILE}:latest", f"{session_namespace()}/repro-first:1"
    images: list[dict[str, Any]] = []
    try:
        for n in (1, 2):
            _clean(docker_client, tmp_path / f"state{n}")
            output, seconds = _build(tmp_path, n)
            attrs = docker_client.images.get(alias).attrs
            images.append({"id": attrs["Id"], "layers": attrs["RootFS"]["Layers"], "seconds": round(seconds, 1),
                           "output": output.splitlines()[-6:]})
            if n == 1:
                docker_client.images.get(alias).tag(kept)
        frozen = [sorted((tmp_path / f"state{n}" / "locks").glob(f"{PROFILE}-*.txt")) for n in (1, 2)]
        assert len(frozen[0]) == 1 and [p.read_text() for p in frozen[0]] == [p.read_text() for p in frozen[1]]
        first, second = images
        report = {"engine": f"{engine.name} {engine.version}", "builder": builder.reason,
                  "layers": len(first["layers"]),
                  "identical_layers": sum(a == b for a, b in zip(first["layers"], second["layers"], strict=False)),
                  "same_image_id": first["id"] == second["id"], "builds": images}
        print(json.dumps(report))
        if os.environ.get("ENVGEN_REPRO_REPORT"):
            Path(os.environ["ENVGEN_REPRO_REPORT"]).write_text(json.dumps(report, indent=2) + "\n")
        if first["layers"] != second["layers"]:
            pytest.fail(f"{builder.reason}: the layers of two clean `envgen build {PROFILE}` differ "
                        f"({report['identical_layers']} of {report['layers']} identical):\n"
                        + _image_diff(kept, alias, builder.cli))
    finally:
        if os.environ.get("ENVGEN_REPRO_KEEP") != "1":  # 1: both images left for bench/image_diff.py, by hand
            for tag in (kept, alias):
                remove_image(docker_client, tag, force=True)
