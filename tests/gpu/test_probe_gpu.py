"""The probe on a real GPU: an honest pass, the no-kernel diagnosis, CPU-only and no-GPU runs, and its
matmul speed against the plain reference (bench/matmul_plain.py) and the sustained one."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from probe_run import ROOT, by_name, run_probe, write_expect

pytestmark = pytest.mark.gpu


def test_probe_passes_on_matching_environment(tmp_path):
    code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path)))
    checks = by_name(report)
    failed = {name: c["message"] for name, c in checks.items() if c["status"] == "fail"}
    assert code == 0, failed
    assert report["schema"] == "envgen.smoke/1"
    assert report["status"] == "pass" and report["mode"] == "gpu"
    for name in ("devices", "torch.devices", "torch.kernels", "torch.matmul", "torch.conv", "torch.speed",
                 "torch.amp", "torch.train"):
        assert checks[name]["status"] == "pass", name
    assert checks["torch.matmul"]["figures"]["result_device_fp32"].startswith("cuda")
    speed = checks["torch.speed"]["figures"]
    assert speed["fp32_tflops"] > 1 and speed["speedup_fp32_vs_cpu"] > 1
    assert checks["torch.train"]["figures"]["loss_last"] < checks["torch.train"]["figures"]["loss_first"]
    # Headroom: the probe took 16.84 s on the H200 on 2026-11-30 (docs/validation/2026-11-30-h200/probe-h200.json);
    # on 2026-12-01 (session 4) the same host gave 31.25, 26.95 and 32.03 s (its `imports` check alone 9-11 s, the
    # host's extensions imported), so the bound is ~1.9x over the slowest seen.
    assert report["duration_s"] < 60


def test_missing_arch_gives_no_kernel_diagnosis(tmp_path):
    code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path)), "--arch-list", "sm_50,sm_60")
    checks = by_name(report)
    assert code == 1 and report["status"] == "fail"
    kernels = checks["torch.kernels"]
    assert kernels["status"] == "fail"
    assert kernels["diagnosis"]["id"] == "no-kernel-image"
    assert checks["torch.matmul"]["status"] == "skipped"


def test_cpu_only_profile_skips_gpu_checks_and_runs_on_cpu(tmp_path):
    expect = write_expect(tmp_path, "--cpu-only", "--matmul-size", "1024")
    code, report = run_probe(tmp_path, "--expect", str(expect), env={"CUDA_VISIBLE_DEVICES": ""})
    checks = by_name(report)
    assert code == 0, {n: c["message"] for n, c in checks.items() if c["status"] == "fail"}
    assert report["mode"] == "cpu-only"
    assert checks["torch.kernels"]["status"] == "skipped"
    assert checks["torch.kernels"]["message"].startswith("CPU-only profile")
    assert checks["torch.matmul"]["status"] == "pass"
    assert checks["torch.matmul"]["figures"]["device"] == "cpu"
    assert checks["torch.train"]["status"] == "pass"


def test_gpu_profile_without_usable_gpu_fails_honestly(tmp_path):
    code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path)),
                             env={"CUDA_VISIBLE_DEVICES": ""})
    checks = by_name(report)
    assert code == 1 and report["status"] == "fail"
    assert checks["torch.devices"]["status"] == "fail"
    assert checks["torch.devices"]["diagnosis"]["id"] == "no-gpu-in-container"


def _plain_peaks(tmp_path, n: int, run: int) -> dict[str, float]:
    """bench/matmul_plain.py at the probe's size, each precision in a process of its own after an idle second, as
    a user timing one precision would: run back to back, a precision started right after another's load begins
    on the clock the power cap left (tf32 read 377 after fp32's loops, 410 fresh; H200 run 2026-11-30)."""
    plain: dict[str, float] = {}
    for label in ("fp32", "tf32", "fp16", "bf16"):
        out = tmp_path / f"plain-{label}-{run}.json"
        time.sleep(1.0)
        subprocess.run([sys.executable, str(ROOT / "bench" / "matmul_plain.py"), "--n", str(n), "--repeats", "1",
                        "--precisions", label, "--json", str(out)], check=True, timeout=300)
        plain.update({row["precision"]: row["tflops"] for row in json.loads(out.read_text())["results"]})
    return plain


def test_probe_speed_within_five_percent_of_plain_reference(tmp_path):
    """The probe's peak figures against bench/matmul_plain.py (20 products ``a @ b`` after warm-up) at the probe's
    size, and its sustained figures against bench/matmul_reference.py (long batches). Peaks are compared as
    peaks: the best of two runs on each side, alternated (probe, plain, probe, plain), since the H200's power cap
    only ever lowers a run's figure (one probe run read tf32 388 against a plain 410, 2026-12-01, 5.3 %)."""
    probes, plains = [], []
    for run in range(2):
        _code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path)))
        probes.append(by_name(report)["torch.speed"]["figures"])
        plains.append(_plain_peaks(tmp_path, probes[0]["n"], run))
    probe = probes[-1]
    sustained_out = tmp_path / "sustained.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "matmul_reference.py"), "--sizes", str(probe["n"]),
                    "--repeats", "10", "--json", str(sustained_out)], check=True, timeout=300)
    sustained = {row["precision"]: row["tflops_median"]
                 for row in json.loads(sustained_out.read_text())["results"]}
    for label in plains[0]:
        measured, ref = max(p[label + "_tflops"] for p in probes), max(p[label] for p in plains)
        # Headroom: the claim under test, not a timing allowance. Peaks were within 3 % of the plain reference
        # (docs/validation/README.md), one tf32 run 5.3 % before peaks were compared as peaks (best of two, above).
        assert abs(measured - ref) / ref < 0.05, (label, [p[label + "_tflops"] for p in probes],
                                                  [p[label] for p in plains])
        if probe[label + "_tflops_sustained"] is not None:
            measured, ref = probe[label + "_tflops_sustained"], sustained[label]
            # Headroom: sustained figures were within 3 % of the sustained reference (2026-11-30-h200): ~3x.
            assert abs(measured - ref) / ref < 0.10, (label, "sustained", measured, ref)
