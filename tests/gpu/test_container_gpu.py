"""The whole pipeline in a container on this GPU host: scripts/gpu-host-validate (engine with CDI, a base
from the host's userland, doctor, build with both tiers in the container, run, the lying declarations,
matmul bare vs in the container), then its outputs checked. Needs the packed engine and envgen's missing
dependencies as wheels: ENVGEN_GPU_ENGINE=engine.tar.xz ENVGEN_GPU_WHEELS=DIR (skips without them), and
ENVGEN_START_ENGINE where start-engine is not at ../shared/gpu-host/. About 3 minutes on the H200."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from probe_run import ROOT

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Path:
    engine, wheels = os.environ.get("ENVGEN_GPU_ENGINE"), os.environ.get("ENVGEN_GPU_WHEELS")
    if not engine or not wheels:
        pytest.skip("ENVGEN_GPU_ENGINE and ENVGEN_GPU_WHEELS are not set (see docs/validation/2026-12-01-h200-cdi)")
    kept = os.environ.get("ENVGEN_GPU_OUT")  # where to keep the outputs (docs/validation), else a temporary folder
    out = Path(kept) if kept else tmp_path_factory.mktemp("gpu-host")
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-host-validate"), str(out), engine, wheels],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def rc(outputs: Path, step: str) -> int:
    rows = dict(line.split("\t")[:2] for line in (outputs / "steps.tsv").read_text().splitlines()[1:])
    return int(rows[step])


def text(outputs: Path, step: str) -> str:
    return (outputs / f"{step}.txt").read_text()


def test_doctor_shows_the_cdi_route(outputs: Path) -> None:
    report = json.loads((outputs / "doctor.json").read_text())
    assert report["host"]["gpu_access"]["route"] == "cdi" and report["host"]["cdi"]["enabled"]
    assert report["profiles"][0]["verdict"] in ("runs", "runs-with-warning")


def test_build_validates_both_tiers_in_the_container(outputs: Path) -> None:
    assert rc(outputs, "build") == 0 and "validated: gpu" in text(outputs, "build")
    assert "pass (gpu)" in text(outputs, "images")


def test_what_the_base_holds_is_not_fetched_and_is_checked(outputs: Path) -> None:
    """Issue 32 item 4: host-torch-held repeats in packages.pip what the base holds (base_provides.packages). Built
    with --offline and an empty wheelhouse, nothing is downloaded and the library tier checks the base's versions;
    the GPU tier then calls each package. This base is the host's userland without /usr/local/cuda, and CuPy's kernel
    compiler needs the toolkit's headers there: the probe says so in CuPy's own words (seen on 2026-12-02, H200,
    docs/validation/2026-12-02-h200), while Triton (which carries its own ptxas) compiles and runs. The smoke test
    fails the image (exit 6) for what it lacks; it is not tagged."""
    held = text(outputs, "build-held")
    # the build itself succeeded offline from an empty wheelhouse: nothing was left to download or install
    assert "wheelhouse: /tmp/envgen-empty-wheelhouse" in held and "\nok: sha256:" in held
    assert "base image: cupy-cuda13x 14.2.0, triton 3.6.0" in " ".join(held.split())
    assert "imports               PASS     3 distributions import: torch, cupy-cuda13x, triton" in held
    assert "ext.triton            PASS" in held
    assert "ext.cupy-cuda13x      FAIL     RuntimeError: Failed to find CUDA headers" in held
    assert rc(outputs, "build-held") == 6 and "failed its smoke test" in held


def test_run_hands_the_gpu_by_cdi(outputs: Path) -> None:
    assert rc(outputs, "run-bf16") == 0 and "TFLOP/s" in text(outputs, "run-bf16")
    assert text(outputs, "run-gpus-1").strip().endswith("GPUs seen: 1")
    # exit 7: the host cannot do it (envgen.errors.HostIncompatible), one line naming the spec
    assert rc(outputs, "run-gpus-2") == 7 and "/etc/cdi/nvidia.json declares no nvidia.com/gpu=1" in text(outputs,
                                                                                                        "run-gpus-2")
    none = text(outputs, "run-gpus-none")
    assert "cuda available: False" in none and "is a GPU profile" in none


def test_lies_fail_in_the_container_with_the_diagnosis(outputs: Path) -> None:
    # exit 6: a smoke test failed (envgen.errors.SmokeFailed)
    assert rc(outputs, "build-lie-cuda") == 6 and "libraries.base        FAIL" in text(outputs, "build-lie-cuda")
    no_kernel = text(outputs, "gpu-tier-no-kernel")
    assert rc(outputs, "gpu-tier-no-kernel") == 1 and "no kernels for sm_90" in no_kernel


def test_a_container_costs_the_gpu_nothing(outputs: Path) -> None:
    """Medians of three alternated runs of the same plain matmul, bare and through `envgen run` (one run's first
    loop moves by several per cent with the H200's power cap)."""
    rows = json.loads((outputs / "plain-compare.json").read_text())
    for precision in ("bf16", "fp16"):
        # Headroom: the differences were -0.10 % (fp16) and 0.00 % (bf16) on the H200
        # (docs/validation/2026-12-01-h200-session3, call 2): the 2 % bound is ~20x that.
        assert abs(rows[precision]["difference_pct"]) < 2.0, (precision, rows[precision])
