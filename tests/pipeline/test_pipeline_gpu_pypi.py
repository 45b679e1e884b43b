"""A real GPU image built here, without a GPU: the built-in `a100-pypi` (TensorFlow 2.12 on CUDA 11.8 /
cuDNN 8.6 from NVIDIA's PyPI wheels, locked with hashes) passes the probe's library tier and is sealed as
"validated: libraries". Its twin with the CUDA 12 wheels is test_pipeline_gpu_pypi_cu12.py: a module of its own,
so that the suite's disk keeping (tests/disk.py) runs between the two 5.4 GB builds.

Cost, measured here (2 cores): a100-pypi cold ~270 s (TensorFlow + ~2.7 GB of CUDA 11 wheels, 5.4 GB
image); warm, it comes from the BuildKit layer cache and its pip cache mount in seconds. The probe's library
tier takes ~3 s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from envgen.docker import remove_image
from envgen.errors import HostIncompatible, SmokeFailed
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.publish import pull, push
from envgen.pipeline.run import run
from envgen.pipeline.smoke import run_smoke
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.tiers import TIER_LABEL, host_plan
from tests.pipeline.conftest import publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

PROFILES = Path(__file__).resolve().parents[2] / "profiles"


@pytest.fixture(scope="module")
def expected_tier() -> str:
    """What this host can prove: the library tier alone where no GPU can be handed to a container."""
    return "libraries" if host_plan(True).tiers == "libraries" else "gpu"


@pytest.fixture(scope="module")
def outcome(envgen_home: Path) -> Iterator[BuildOutcome]:
    yield build("a100-pypi")


def test_a100_pypi_is_validated_at_the_tier_this_host_allows(outcome: BuildOutcome, expected_tier: str) -> None:
    report = outcome.smoke
    assert report is not None and report.passed, report and report.table()
    assert outcome.validated and outcome.tier == expected_tier and report.tier == expected_tier
    if expected_tier == "libraries":
        assert report.mode == "libraries" and outcome.tier_reason
        assert f"validated: libraries; the GPU tier did not run: {outcome.tier_reason}" in outcome.summary()


def test_every_library_tensorflow_loads_resolves_into_the_image(outcome: BuildOutcome) -> None:
    assert outcome.smoke is not None
    frameworks = outcome.smoke.check("libraries.frameworks")
    assert frameworks is not None and frameworks.figures["tensorflow"]["cuda"] == "11.8"
    load = outcome.smoke.check("libraries.load")
    assert load is not None and load.status == "pass"
    libs = {lib["soname"]: lib for lib in load.figures["libraries"]}
    assert set(libs) == {"libcudart.so.11.0", "libcublas.so.11", "libcublasLt.so.11", "libcufft.so.10",
                         "libcurand.so.10", "libcusolver.so.11", "libcusparse.so.11", "libcudnn.so.8"}
    for lib in libs.values():
        assert lib["path"].startswith("/opt/env/lib/python3.11/site-packages/nvidia/"), lib
    assert libs["libcudart.so.11.0"]["version"] == "11.8.89"  # from the wheel: the call answers error 35
    assert libs["libcudnn.so.8"]["version"] == "8.6.0" and libs["libcudnn.so.8"]["min_version"] == "8.6"
    arch = outcome.smoke.check("libraries.arch")
    assert arch is not None and arch.status == "pass" and "A100 sm_80: PTX compute_80 only" in arch.message


def test_the_tier_is_sealed_recorded_and_shown(outcome: BuildOutcome, docker_client: DockerClient,
                                               expected_tier: str, envgen_home: Path) -> None:
    labels = docker_client.images.get(outcome.tag).labels
    assert labels["io.envgen.smoke"] == "pass" and labels[TIER_LABEL] == expected_tier
    record = ValidationStore(envgen_home / "state").get(outcome.image_id)
    assert record is not None and record.passed and record.tier == expected_tier
    from envgen.cli import app

    runner = CliRunner()
    shown = runner.invoke(app, ["images"])
    assert shown.exit_code == 0, shown.output
    row = next(line for line in shown.output.splitlines() if outcome.tag in line)
    assert row.split()[-2] == expected_tier  # TIER, then SIGNED BY (this state directory's key)
    rows = json.loads(runner.invoke(app, ["images", "--json"]).output)
    assert next(r for r in rows if outcome.tag in r["tags"])["tier"] == expected_tier
    smoked = runner.invoke(app, ["smoke", outcome.tag, "--json"])
    assert smoked.exit_code == 0, smoked.output
    assert json.loads(smoked.output)["tier"] == expected_tier


def test_push_says_the_tier_and_pull_runs_what_this_host_can(outcome: BuildOutcome, local_registry: str,
                                                             expected_tier: str) -> None:
    registry = publish_registry(local_registry)  # removed with the session's namespace
    pushed = push("a100-pypi", registry=registry)
    assert "@sha256:" in pushed and f"(validated: {expected_tier}; signed attestation: " in pushed
    pulled = pull("a100-pypi", registry=registry)
    assert f"smoke test on this host: pass ({'libraries' if expected_tier == 'libraries' else 'gpu'}" in pulled
    if expected_tier == "libraries":
        assert "the GPU tier did not run: no GPU on this host" in pulled or "cannot hand them" in pulled


def test_run_without_a_gpu_host(outcome: BuildOutcome, expected_tier: str) -> None:
    if expected_tier != "libraries":
        pytest.skip("this host can hand out GPUs: `envgen run` runs the GPU tier first instead")
    with pytest.raises(HostIncompatible):  # the image wants a GPU; the gate says there is none
        run("a100-pypi", command=["true"])
    assert run("a100-pypi", command=["python", "-c", "import tensorflow"], gpus="none", out=lambda _l: None) == 0


def test_an_image_without_python_fails_with_a_diagnosis(docker_client: DockerClient, envgen_home: Path) -> None:
    """The probe cannot run at all: no tier is proved, and the failure says why."""
    import io
    import tarfile

    script = b'#!/bin/sh\nexec /opt/env/bin/python /opt/envgen/probe/envgen_probe.py "$@"\n'
    dockerfile = b"FROM debian:bookworm-slim\nCOPY envgen-smoke /usr/local/bin/envgen-smoke\n"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, payload, mode in (("Dockerfile", dockerfile, 0o644), ("envgen-smoke", script, 0o755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(payload), mode
            tar.addfile(info, io.BytesIO(payload))
    archive.seek(0)
    tag = "i10pipe-nopython:test"
    docker_client.images.build(fileobj=archive, custom_context=True, tag=tag, rm=True)
    try:
        with pytest.raises(SmokeFailed) as caught:
            run_smoke(docker_client, tag, gpus="none", tier="libraries", profile_name="nopython", content_hash="",
                      store=ValidationStore(envgen_home / "state"))
        assert "produced no report" in caught.value.message and "no tier is proved" in caught.value.message
        assert "The image has no Python on PATH" in caught.value.message
    finally:
        remove_image(docker_client, tag, force=True)


def test_engine_refusing_the_gpu_falls_back_to_the_library_tier_and_says_why(
        outcome: BuildOutcome, docker_client: DockerClient, envgen_home: Path, expected_tier: str) -> None:
    """The plan asked for both tiers (host facts unreadable, or a GPU host); this engine has no NVIDIA
    runtime, so it refuses the GPU request: the library tier still runs and the reason is kept."""
    if expected_tier != "libraries":
        pytest.skip("this engine hands out GPUs")
    from envgen.pipeline.smoke import run_planned
    from envgen.pipeline.tiers import TierChoice

    report, plan = run_planned(docker_client, outcome.tag, TierChoice("all", "all"), profile_name="a100-pypi",
                               content_hash="", store=ValidationStore(envgen_home / "state" / "fallback"))
    assert report.passed and report.tier == "libraries" and plan.tiers == "libraries"
    assert plan.reason and plan.reason.startswith("the engine refused the GPU request: the Docker engine cannot "
                                                  "hand GPUs to containers")


def test_gpu_tier_before_first_use_refuses_with_the_diagnosis(outcome: BuildOutcome, docker_client: DockerClient,
                                                              envgen_home: Path) -> None:
    """What `envgen run` does with a libraries-validated image about to get a GPU, driven here without one
    (no GPU can reach the container): the GPU tier fails, the failure is recorded against the image ID and
    the run is refused with the diagnosis."""
    from envgen.errors import ImageNotValidated
    from envgen.pipeline.run import gpu_tier_first

    store = ValidationStore(envgen_home / "state" / "gpu-first")
    said: list[str] = []
    labels = docker_client.images.get(outcome.tag).labels
    with pytest.raises(ImageNotValidated) as caught:
        gpu_tier_first(docker_client, outcome.image_id, labels, "none", store, said.append)
    assert "passed the library tier but failed the GPU tier on this host (devices:" in caught.value.message
    assert caught.value.fix and "--gpus all" in caught.value.fix  # the no-gpu-in-container diagnosis
    assert said and "validated at the library tier only" in said[0]
    record = store.get(outcome.image_id)
    assert record is not None and record.status == "fail" and record.tier == ""
