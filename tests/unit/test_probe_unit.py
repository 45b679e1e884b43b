"""The probe's pure parts: Python 3.7 compatibility, kernel/arch logic, versions, the check runner."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_probe_helpers import probe_module

from envgen.paths import probe_dir, probe_package_dir


def _vermin() -> str:
    beside = Path(sys.executable).with_name("vermin")
    found = str(beside) if beside.exists() else shutil.which("vermin")
    assert found, "vermin is not installed (pip install -e '.[test]')"
    return found


def test_probe_runs_on_python_37() -> None:
    done = subprocess.run([_vermin(), "--no-tips", "--violations", "-t=3.7-", str(probe_dir())],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = subprocess.run([_vermin(), "--no-tips", str(probe_dir())],
                            capture_output=True, text=True, check=True).stdout
    minimum = [line for line in report.splitlines() if line.startswith("Minimum required versions")][-1]
    major, minor = (int(part) for part in minimum.split(":")[1].strip().split(",")[-1].strip().split("."))
    assert (major, minor) <= (3, 7), minimum


def test_probe_is_small_and_standalone() -> None:
    files = sorted(p.relative_to(probe_dir()).as_posix() for p in probe_dir().rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    shipped = {"envgen_probe.py", "envgen_checks/core/diagnoses.json", "envgen_checks/library/libraries.json"}
    assert shipped <= set(files)
    # small: the probe is copied into every image (split by kind of check, so counted in bytes, not files)
    assert sum((probe_dir() / name).stat().st_size for name in files) <= 500_000
    envgen = re.compile(r"^\s*(import|from) envgen\b(?!_)", re.M)
    for path in probe_dir().rglob("*.py"):
        assert envgen.search(path.read_text()) is None, path.name


def test_the_probe_is_a_package_grouped_by_tier_with_one_entry_point() -> None:
    """One script at the folder's top (envgen_probe.py: the probe and, first argument ``preflight``, the preflight);
    every other module in the package by tier, importing its siblings relatively: no flat ``import probe_x`` that
    needs its own folder on the path (issue #41)."""
    from envgen import layout

    scripts = sorted(p.name for p in probe_dir().glob("*.py"))
    assert scripts == [layout.PROBE_ENTRY]
    tiers = sorted(p.name for p in probe_package_dir().iterdir() if (p / "__init__.py").is_file())
    assert tiers == ["core", "gpu", "library"]
    flat = re.compile(r"^\s*(import|from) (probe_\w+|envgen_checks)\b", re.M)
    found = [p.name for p in probe_package_dir().rglob("*.py") if flat.search(p.read_text())]
    assert found == []


@pytest.mark.parametrize(
    ("capability", "arch_list", "sass", "ptx"),
    [
        ((9, 0), ["sm_80", "sm_86", "sm_90"], ["sm_90"], []),
        ((9, 0), ["sm_50", "sm_60", "sm_80", "sm_86"], [], []),
        ((9, 0), ["sm_80", "compute_80"], [], ["compute_80"]),
        ((8, 6), ["sm_80"], ["sm_80"], []),
        ((8, 0), ["sm_86"], [], []),
        ((9, 0), ["sm_90a"], ["sm_90a"], []),
        ((10, 0), ["sm_90a", "compute_90a"], [], []),
        ((12, 0), ["sm_100", "sm_120", "compute_120"], ["sm_120"], ["compute_120"]),
        ((5, 0), ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"], ["sm_50"], []),
    ],
)
def test_kernel_support(capability, arch_list, sass, ptx) -> None:
    assert probe_module("core.kernels").kernel_support(capability, arch_list) == (sass, ptx)


def test_version_helpers() -> None:
    versions, timing = probe_module("core.versions"), probe_module("gpu.timing")
    assert versions.version_matches("2.1.2+cu121", "2.1.2+cu121")
    assert not versions.version_matches("2.1.2+cu121", "2.1.2+cu118")
    assert versions.version_matches("2.1.2", "2.1.2+cu121")
    assert versions.version_matches("3.10", "3.10.13")
    assert not versions.version_matches("3.10.13", "3.10.12")
    assert versions.version_matches("8.9", "8.6.0", depth=1)
    assert not versions.version_matches("8.9", "8.6.0", depth=2)
    assert not versions.version_matches("12.1", None)
    assert versions.version_matches(None, "anything")
    assert versions.cudnn_text(8902) == "8.9.2"
    assert versions.cudnn_text(7605) == "7.6.5"
    assert versions.cudnn_text(91900) == "9.19.0"
    assert versions.cuda_from_variant("1.7.1+cu101") == "10.1"
    assert versions.cuda_from_variant("2.11.0+cu130") == "13.0"
    assert versions.cuda_from_variant("2.13.0+cpu") is None
    assert timing.median([3, 1, 2]) == 2 and timing.median([4, 1, 2, 3]) == 2.5


def test_context_reads_profile_and_expected_tolerantly() -> None:
    common = probe_module("core.common")
    profile = {"name": "p", "python": "3.10.13", "cuda": "12.1", "cudnn": "8.9",
               "frameworks": {"pytorch": "2.1.2+cu121", "tensorflow": "2.12.0"},
               "gpu": {"required": True}, "smoke": {"matmul_size": 2048, "train_steps": 5},
               "expected": {"cuda": {"tensorflow": "11.8", "torch": "12.1"}, "tensorflow_cudnn": "8.6"}}
    ctx = common.Context(profile, diagnoses=[])
    assert ctx.expected("torch") == "2.1.2+cu121" and ctx.expected("python") == "3.10.13"
    assert ctx.expected_for("cuda", "tensorflow") == ("11.8", True)
    assert ctx.expected_for("cudnn", "tensorflow") == ("8.6", True)
    assert ctx.expected_for("cudnn", "torch") == ("8.9", False)
    assert ctx.gpu_required() is True
    assert (ctx.matmul_size, ctx.train_steps, ctx.batch_size) == (2048, 5, 64)
    assert common.Context({}, diagnoses=[]).gpu_required() is None
    cpu_only = common.Context({"gpu": {"required": False}, "python": "3.11"}, diagnoses=[])
    assert cpu_only.gpu_required() is False


def test_run_check_records_pass_skip_fail_and_diagnoses_exceptions() -> None:
    common = probe_module("core.common")
    ctx = common.Context({}, diagnoses=common.load_diagnoses())

    def boom(_ctx):
        raise RuntimeError("CUDA error: no kernel image is available for execution on the device")

    def skip(_ctx):
        raise common.Skip("CPU-only profile")

    def fail(_ctx):
        raise common.Fail("loss did not decrease: 2.3 -> 2.4", {"loss_first": 2.3})

    common.run_check(ctx, "ok", None, lambda _ctx: ("fine", {"x": 1}))
    common.run_check(ctx, "boom", "torch", boom)
    common.run_check(ctx, "skip", None, skip)
    common.run_check(ctx, "fail", None, fail)
    ok, crashed, skipped, failed = ctx.checks
    assert ok["status"] == "pass" and ok["figures"] == {"x": 1}
    assert crashed["status"] == "fail" and crashed["diagnosis"]["id"] == "no-kernel-image"
    assert crashed["message"].startswith("RuntimeError: CUDA error")
    assert skipped["status"] == "skipped" and skipped["message"] == "CPU-only profile"
    assert failed["diagnosis"]["id"] == "loss-not-decreasing"


def test_time_budget_fails_remaining_checks() -> None:
    """A check the budget left no time for proves nothing: it fails (a skip would let the report pass)."""
    common = probe_module("core.common")
    ctx = common.Context({"smoke": {"timeout_s": 10}}, diagnoses=common.load_diagnoses(), started=0.0)
    entry = common.run_check(ctx, "late", None, lambda _ctx: ("never", {}))
    assert entry["status"] == "fail" and "time budget" in entry["message"]
    assert entry["diagnosis"]["id"] == "time-budget"


def test_capture_stderr_catches_native_writes() -> None:
    common = probe_module("core.common")
    with common.CaptureStderr() as captured:
        os.write(2, b"W dso_loader.cc] Could not load dynamic library 'libcudart.so.11.0'\n")
    assert "libcudart.so.11.0" in captured.text


def test_parse_nvidia_smi_rows() -> None:
    system = probe_module("core.system")
    driver, gpus = system.parse_nvidia_smi("NVIDIA H200, 580.159.04, 143771, 9.0\nNVIDIA GeForce GTX 950M, "
                                           "470.256.02, 2004 MiB, 5.0\n")
    assert driver == "470.256.02"
    assert gpus[0] == {"index": 0, "name": "NVIDIA H200", "memory_mib": 143771, "compute_capability": "9.0"}
    assert gpus[1]["memory_mib"] == 2004 and gpus[1]["compute_capability"] == "5.0"


def _fake_torch(capability: tuple[int, int], arch_list: list[str]) -> SimpleNamespace:
    cuda = SimpleNamespace(device_count=lambda: 1, get_device_capability=lambda _i=0: capability,
                           get_arch_list=lambda: arch_list)
    return SimpleNamespace(cuda=cuda)


def test_torch_kernels_check_with_arch_override(monkeypatch) -> None:
    common = probe_module("core.common")
    probe_torch = probe_module("gpu.torch_checks")
    fake = _fake_torch((9, 0), ["sm_80", "sm_90"])
    monkeypatch.setattr(probe_module("gpu.torch_base"), "_import_torch", lambda: fake)
    ctx = common.Context({"gpu": {"required": True}}, arch_override=["sm_50", "sm_60"],
                         diagnoses=common.load_diagnoses())
    ctx.mode, ctx.gpus = "gpu", [{"name": "H200"}]
    ctx.frameworks["torch"] = {"gpu_ok": True}
    entry = common.run_check(ctx, "torch.kernels", "torch", probe_torch.check_kernels)
    assert entry["status"] == "fail" and entry["diagnosis"]["id"] == "no-kernel-image"
    assert entry["figures"]["arch_list_source"] == "--arch-list"
    ctx.arch_override = None
    entry = common.run_check(ctx, "torch.kernels", "torch", probe_torch.check_kernels)
    assert entry["status"] == "pass" and "sm_90" in entry["message"]
    assert ctx.frameworks["torch"]["kernels_ok"] is True


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU machine answers differently")
def test_cli_without_expect_is_an_honest_cpu_only_run(tmp_path) -> None:
    from test_probe_cli import run_probe_cli

    code, report = run_probe_cli(tmp_path)
    assert code == 0 and report["mode"] == "cpu-only" and report["status"] == "pass"


def test_the_foreign_route_ships_the_probe_as_render_does() -> None:
    """`envgen smoke IMAGE` copies the probe in as a tar (docker/foreign.directory_tar), an envgen image gets it
    from the context (render/files.probe_files): the same files, package folders included."""
    import io
    import tarfile

    from envgen.docker.foreign import directory_tar
    from envgen.render.files import PROBE_PREFIX, probe_files

    with tarfile.open(fileobj=io.BytesIO(directory_tar(probe_dir(), "envgen-probe"))) as tar:
        shipped = {m.name[len("envgen-probe/"):]: tar.extractfile(m).read()  # type: ignore[union-attr]
                   for m in tar.getmembers() if m.isfile()}
    rendered = {rel[len(PROBE_PREFIX):]: data for rel, data in probe_files().items()}
    assert shipped == rendered and "envgen_checks/gpu/torch_checks.py" in shipped
