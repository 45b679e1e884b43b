"""The image's preflight under a plain `docker run` (issue #42), on every CI run without a GPU: CDI is the route on
which the NVIDIA Container Toolkit never reads NVIDIA_REQUIRE_CUDA, so the image checks for itself.

The image is debian:bookworm-slim with Debian's python3 and the files envgen renders for a100-pypi (its entrypoint,
the probe folder holding envgen_preflight.py, its /etc/envgen/profile.json) under envgen's paths, the entrypoint
as ENTRYPOINT. A CDI spec of kind nvidia.com/gpu, written into a spec directory only the engine under test reads
(scripts/engine-current's Docker 26; scripts/test runs this module there, as test_pipeline_cdi.py), gives the
container what a GPU route gives it: a device node (a copy of /dev/null's), NVIDIA_VISIBLE_DEVICES, and an
``nvidia-smi`` on a GKE-style /usr/local/nvidia/bin that prints what the real one printed on the H200 host
(``tests/fixtures/hosts/h200-580/query-gpu.csv``: driver 580.159.04, NVIDIA H200, 9.0). The same checks ran with
the real driver on the H200 (docs/validation/2026-12-03-h200-preflight)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen import layout
from envgen.docker import build_image, detect_builder, remove_image
from envgen.docker.engine import engine_info
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render import render_in_memory
from tests.pipeline.test_pipeline_cdi import cdi_dir  # noqa: F401  (the fixture: a spec directory of this engine's)

if TYPE_CHECKING:
    from docker import DockerClient

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
DOCKERFILE = f"""FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/* \\
    && mkdir -p {layout.ENV}/bin && ln -s /usr/bin/python3 {layout.ENV}/bin/python
COPY envgen/envgen-entrypoint {layout.ENTRYPOINT}
COPY envgen/probe/ {layout.PROBE}/
COPY envgen/profile.json {layout.PROFILE_JSON}
ENTRYPOINT ["{layout.ENTRYPOINT}"]
"""


@pytest.fixture(scope="module")
def image(docker_client: DockerClient, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if os.environ.get("ENVGEN_TEST_CDI_DIR") not in (docker_client.info().get("CDISpecDirs") or []):
        pytest.skip("runs on the engine whose CDI spec directory $ENVGEN_TEST_CDI_DIR names (scripts/test runs this "
                    "module on scripts/engine-current's Docker 26 with it)")
    ctx = render_in_memory(plan_image(load_profile("a100-pypi", env={}), load_kb()))
    context = tmp_path_factory.mktemp("preflight-ctx")
    for rel, data in ctx.files.items():
        if rel.startswith("envgen/"):
            (context / rel).parent.mkdir(parents=True, exist_ok=True)
            (context / rel).write_bytes(data)
            (context / rel).chmod(0o755 if rel in ctx.executable else 0o644)
    (context / "Dockerfile").write_text(DOCKERFILE)
    tag = f"{os.environ.get('ENVGEN_NAMESPACE', 'envgen-test')}-preflight:{uuid.uuid4().hex[:10]}"
    engine = engine_info(docker_client)
    build_image(context, builder=detect_builder(engine=engine), log_path=context / "build.log", tags=[tag],
                client=docker_client)
    try:
        yield tag
    finally:
        remove_image(docker_client, tag, force=True)


@pytest.fixture
def h200_spec(cdi_dir: Path, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    """A nvidia.com/gpu spec whose nvidia-smi answers as the H200's did; yields its device name."""
    marker = uuid.uuid4().hex[:10]
    node = tmp_path / "fake0"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "query-gpu.csv").write_bytes((HOSTS / "h200-580" / "query-gpu.csv").read_bytes())
    (tools / "nvidia-smi").write_text("#!/bin/sh\ncat /usr/local/nvidia/bin/query-gpu.csv\n")
    (tools / "nvidia-smi").chmod(0o755)
    edits = {"deviceNodes": [{"path": "/dev/envgen-fake0", "hostPath": str(node)}]}
    spec = {"cdiVersion": "0.5.0", "kind": "envgen-test.example/gpu",
            "devices": [{"name": marker, "containerEdits": edits}],
            "containerEdits": {
                "env": ["NVIDIA_VISIBLE_DEVICES=all", "PATH=/usr/local/nvidia/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                "mounts": [{"hostPath": str(tools), "containerPath": "/usr/local/nvidia/bin",
                            "options": ["ro", "bind"]}]}}
    path = cdi_dir / f"envgen-test-preflight-{marker}.json"
    path.write_text(json.dumps(spec))
    try:
        yield f"envgen-test.example/gpu={marker}"
    finally:
        path.unlink(missing_ok=True)


def docker_run(*args: str) -> subprocess.CompletedProcess[str]:
    """A plain `docker run` of the engine under test (DOCKER_HOST; engine-current puts its CLI first on PATH)."""
    return subprocess.run(["docker", "run", "--rm", *args], capture_output=True, text=True, timeout=300)


def test_a_matching_gpu_and_driver_pass_silently_and_the_command_keeps_its_exit_code(image: str,
                                                                                      h200_spec: str) -> None:
    done = docker_run("--device", h200_spec, image, "sh", "-c", "echo ran; exit 7")
    assert (done.returncode, done.stdout, done.stderr) == (7, "ran\n", "")
    pid1 = docker_run("--device", h200_spec, image, "cat", "/proc/1/cmdline")
    assert pid1.stdout.split("\0")[:2] == ["cat", "/proc/1/cmdline"], pid1  # exec: the command is PID 1


def test_a_requirement_above_the_hosts_driver_stops_the_command_in_one_line(image: str, h200_spec: str,
                                                                           tmp_path: Path) -> None:
    doc = json.loads(subprocess.run(["docker", "run", "--rm", "--entrypoint", "cat", image, layout.PROFILE_JSON],
                                    capture_output=True, text=True, timeout=120, check=True).stdout)
    doc["preflight"]["drivers"] = [{"cuda": "99.0", "why": "a raised requirement", "driver_min": "600.10",
                                    "minor_compat_min": None}]
    raised = tmp_path / "profile.json"
    raised.write_text(json.dumps(doc))
    done = docker_run("--device", h200_spec, "-v", f"{raised}:{layout.PROFILE_JSON}:ro", image, "sh", "-c", "echo ran")
    assert done.returncode == 78 and done.stdout == "", done
    [line] = done.stderr.splitlines()
    assert line.startswith("envgen preflight: refused: GPU 0 NVIDIA H200 (sm_90): driver 580.159.04 is too old for "
                           "this image's CUDA 99.0 (a raised requirement), which needs driver >= 600.10"), line


def test_no_gpu_is_refused_in_one_line_and_the_switch_runs_the_command(image: str) -> None:
    done = docker_run(image, "sh", "-c", "echo ran")
    assert done.returncode == 78 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("envgen preflight: refused: no NVIDIA GPU is visible in this container"), line
    skipped = docker_run("-e", "ENVGEN_PREFLIGHT=0", image, "sh", "-c", "echo ran")
    assert (skipped.returncode, skipped.stdout, skipped.stderr) == (0, "ran\n", "")
    warned = docker_run("-e", "ENVGEN_PREFLIGHT=warn", image, "sh", "-c", "echo ran")
    assert warned.returncode == 0 and warned.stdout == "ran\n"
    assert warned.stderr.startswith("envgen preflight: warning: no NVIDIA GPU is visible"), warned.stderr
