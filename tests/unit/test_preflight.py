"""The image's preflight (issue #42): the probe's envgen_checks/preflight.py (`envgen_probe.py preflight`), the script
every envgen image runs before the user's command, judged here on this GPU-less machine with the facts the real plan
seals (a100-pypi, modern-a100, a torch 1.13.1 profile) and the GPU and driver an H200 host showed:
``tests/fixtures/hosts/h200-580/query-gpu.csv``, the output `nvidia-smi
--query-gpu=index,name,driver_version,memory.total,compute_cap` printed on the device machine (recorded 2026-11-29),
served by a stand-in `nvidia-smi` on PATH (no NVML here, so the script falls back to it, as it does in containers whose
runtime injects nvidia-smi but no libnvidia-ml). Without that stand-in this machine is what a container started
without a GPU sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_probe_helpers import probe_module

from envgen import layout
from envgen.kb import load_kb
from envgen.paths import probe_dir
from envgen.plan.image import plan_image
from envgen.profile import load_profile

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
SCRIPT = probe_dir() / layout.PROBE_ENTRY  # `envgen_probe.py preflight PROFILE_JSON`, as the entrypoint runs it
TORCH_113 = """name: torch-113
base: debian:bookworm-slim
local_base: true
python: "3.10"
cuda: "11.7"
frameworks: {pytorch: "1.13.1"}
gpu: {targets: ["8.0"]}
"""


def facts_of(profile: str | Path) -> dict[str, Any]:
    return plan_image(load_profile(str(profile), env={}), load_kb()).preflight


def run(tmp_path: Path, facts: dict[str, Any], host: str | None = "h200-580",
        mode: str | None = None) -> tuple[int, str, dict[str, Any]]:
    """(exit code, stderr, the --json document) of the preflight over ``facts``, the GPUs of recorded ``host``
    answered by a stand-in nvidia-smi (None: no GPU at all)."""
    (tmp_path / "profile.json").write_text(json.dumps({"preflight": facts}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if host is not None:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\ncat {HOSTS / host / 'query-gpu.csv'}\n")
        smi.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    if mode is not None:
        env["ENVGEN_PREFLIGHT"] = mode
    done = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "preflight", str(tmp_path / "profile.json"),
                           "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    doc = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, done.stderr, doc


@pytest.fixture(autouse=True)
def _no_gpu_here() -> None:
    assert not Path("/proc/driver/nvidia/version").exists(), "these cases need a machine without an NVIDIA driver"


def test_the_plan_seals_the_driver_each_cuda_needs_and_the_gpu_code_of_each_framework() -> None:
    facts = facts_of("a100-pypi")
    assert facts["schema"] == "envgen.preflight/1" and facts["gpu_required"] is True
    assert facts["frameworks"] == ["tensorflow"]
    # cuda.yaml's row of CUDA 11.8 (NVIDIA's release notes, Table 3)
    assert facts["drivers"] == [{"cuda": "11.8", "why": "the profile's CUDA", "driver_min": "520.61.05",
                                 "minor_compat_min": "450.80.02"}]
    [tf] = facts["kernels"]
    assert tf["what"] == "tensorflow 2.12.0 (CUDA 11.8)" and "compute_80" in tf["code"]
    cpu = facts_of("cpu-smoke")
    assert cpu["gpu_required"] is False and cpu["drivers"] == [] and cpu["kernels"] == []


def test_an_h200_on_driver_580_passes_silently(tmp_path: Path) -> None:
    for profile in ("a100-pypi", "modern-a100"):
        code, err, doc = run(tmp_path, facts_of(profile))
        assert (code, err) == (0, ""), (profile, err)
        assert doc["host"] == {"driver": "580.159.04", "gpus": [[0, "NVIDIA H200", "9.0"]], "source": "nvidia-smi"}
        assert doc["findings"] == []


def test_a_requirement_above_the_hosts_driver_refuses_in_one_line_before_the_command(tmp_path: Path) -> None:
    facts = facts_of("a100-pypi")
    # the same image with its sealed requirement raised above the H200's driver 580.159.04
    facts["drivers"] = [{"cuda": "99.0", "why": "a raised requirement", "driver_min": "600.10",
                         "minor_compat_min": None}]
    code, err, _ = run(tmp_path, facts)
    assert code == 78
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("envgen preflight: refused: GPU 0 NVIDIA H200 (sm_90): driver 580.159.04 is too old")
    assert "needs driver >= 600.10" in lines[0] and "fix: run on a host with driver >= 600.10" in lines[0]
    assert ("(envgen suggest --compute-capability 9.0 --driver 580.159.04 --frameworks tensorflow)"
            in lines[0]), lines[0]
    assert lines[0].endswith("(ENVGEN_PREFLIGHT=0 skips this check)")
    assert run(tmp_path, facts, mode="warn")[:2] == (0, err.replace("refused", "warning").replace(
        " (ENVGEN_PREFLIGHT=0 skips this check)", ""))
    assert run(tmp_path, facts, mode="0")[:2] == (0, "")


def test_within_minor_version_compatibility_it_warns_and_runs(tmp_path: Path) -> None:
    facts = facts_of("modern-a100")
    # as cuda.yaml's row of CUDA 13.1 reads: Linux >= 590.44.01, 13.x minor-version compatibility >= 580.65.06
    facts["drivers"] = [{"cuda": "13.1", "why": "a newer CUDA", "driver_min": "590.44.01",
                         "minor_compat_min": "580.65.06"}]
    code, err, _ = run(tmp_path, facts)
    assert code == 0 and err.startswith("envgen preflight: warning: GPU 0 NVIDIA H200 (sm_90): driver 580.159.04 is "
                                        "below CUDA 13.1 (a newer CUDA)'s minimum 590.44.01"), err
    assert "minor-version compatibility (>= 580.65.06)" in err


def test_a_gpu_the_frameworks_ship_no_code_for_is_refused(tmp_path: Path) -> None:
    profile = tmp_path / "torch-113.yaml"
    profile.write_text(TORCH_113)
    facts = facts_of(profile)  # torch 1.13.1+cu117: sm_37 ... sm_86, no PTX (read from the wheel, pytorch.yaml)
    code, err, _ = run(tmp_path, facts)
    assert code == 78 and len(err.splitlines()) == 1, err
    assert err.startswith("envgen preflight: refused: GPU 0 NVIDIA H200 (sm_90): torch 1.13.1+cu117 ships GPU "
                          "code for sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 only"), err
    printed = "envgen suggest --compute-capability 9.0 --driver 580.159.04 --frameworks pytorch"
    assert f"({printed})" in err
    # the command runs as printed: a stack for the H200 on that driver
    ran = subprocess.run([sys.executable, "-m", "envgen", *printed.split()[1:], "-o", str(tmp_path / "s.yaml")],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and (tmp_path / "s.yaml").is_file(), ran.stderr


def test_no_gpu_is_one_line_an_error_for_a_gpu_image_and_nothing_for_a_cpu_image(tmp_path: Path) -> None:
    code, err, doc = run(tmp_path, facts_of("a100-pypi"), host=None)
    assert code == 78 and len(err.splitlines()) == 1 and doc["host"]["gpus"] == []
    assert err.startswith("envgen preflight: refused: no NVIDIA GPU is visible in this container"), err
    assert "--gpus all" in err and "nvidia.com/gpu" in err
    not_required = dict(facts_of("a100-pypi"), gpu_required=False)
    code, err, _ = run(tmp_path, not_required, host=None)
    assert code == 0 and err.startswith("envgen preflight: warning: no NVIDIA GPU is visible"), err
    assert run(tmp_path, facts_of("cpu-smoke"), host=None)[:2] == (0, "")


def test_an_unreadable_profile_json_checks_nothing_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "profile.json").write_text("{not json")
    done = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "preflight", str(tmp_path / "profile.json")],
                          capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, timeout=60)
    assert done.returncode == 0 and done.stderr.startswith("envgen preflight: warning: cannot read "), done.stderr


def test_the_drivers_version_is_read_from_proc_as_the_h200_wrote_it() -> None:
    """/proc/driver/nvidia/version as `cat` printed it on the H200 (its open kernel module: "Module for x86_64
    580.159.04"); no file, no driver."""
    preflight = probe_module("preflight")
    assert preflight._proc_driver(str(HOSTS / "h200-580" / "proc-driver-version.txt")) == "580.159.04"
    assert preflight._proc_driver("/nonexistent/version") is None
