"""The probe's library tier against REAL NVIDIA wheels (they load without a GPU or a driver).

Three small wheels (under 1 MB each: the CUDA runtime of 11.8, 12.1 and 12.4) are downloaded once per
session into pytest's cache directory and installed into temporary target directories; the probe
runs as a subprocess with the LD_LIBRARY_PATH/PYTHONPATH a framework's environment would have. The
pip download needs PyPI (or a mirror pip is configured for): unreachable, it fails under CI=true and
skips elsewhere. Cost: ~5 s cold (download), ~2 s warm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_probe_helpers import probe_module

from envgen.paths import probe_dir
from tests.conftest import unavailable

WHEELS = ("nvidia-cuda-runtime-cu11==11.8.89", "nvidia-cuda-runtime-cu12==12.1.105",
          "nvidia-cuda-runtime-cu12==12.4.127")


@dataclass(frozen=True)
class Wheels:
    both: Path  # cu11 11.8.89 and cu12 12.1.105 installed together: one nvidia/cuda_runtime/lib
    new: Path  # cu12 12.4.127 alone

    def lib(self, target: Path) -> Path:
        return target / "nvidia" / "cuda_runtime" / "lib"


def _download(cache: Path) -> list[Path]:
    found = []
    for spec in WHEELS:
        name, version = spec.split("==")
        stem = name.replace("-", "_") + "-" + version + "-"
        hit = sorted(cache.glob(stem + "*.whl"))
        if not hit:
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--platform", "manylinux2014_x86_64", "--python-version", "3.11",
                   "--disable-pip-version-check", "-d", str(cache), spec]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            hit = sorted(cache.glob(stem + "*.whl"))
            if done.returncode != 0 or not hit:
                unavailable(f"cannot download {spec} from the package index: {done.stderr.strip()[-300:]}")
        found.append(hit[0])
    return found


@pytest.fixture(scope="session")
def wheels(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    cache = Path(request.config.cache.mkdir("nvidia-wheels"))
    cu11, cu121, cu124 = _download(cache)
    root = tmp_path_factory.mktemp("nvidia")
    both, new = root / "both", root / "new"
    for target, files in ((both, [cu11, cu121]), (new, [cu124])):
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                        "--disable-pip-version-check", "--target", str(target), *map(str, files)],
                       check=True, capture_output=True, timeout=300)
    return Wheels(both, new)


def lib_item(soname: str, min_version: str | None, needed_by: str = "tensorflow",
             provider: str = "nvidia-cuda-runtime-cu11") -> dict[str, Any]:
    return {"soname": soname, "family": "cudart", "min_version": min_version, "needed_by": [needed_by],
            "providers": [provider]}


def run_probe(tmp_path: Path, libraries: list[dict[str, Any]] | None, ld_path: list[Path],
              python_path: list[Path], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"name": "libtier", "gpu": {"required": True},
                               "expected": {"gpu_required": True, **(extra or {})}}
    if libraries is not None:
        profile["expected"]["libraries"] = libraries
    expect = tmp_path / "profile.json"
    expect.write_text(json.dumps(profile), encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LD_LIBRARY_PATH": ":".join(map(str, ld_path)), "PYTHONPATH": ":".join(map(str, python_path))}
    done = subprocess.run([sys.executable, str(probe_dir() / "envgen_probe.py"), "--expect", str(expect),
                           "--tier", "libraries", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == 0) == (report["status"] == "pass")
    return report


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["name"] == name)
    return found


def records(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["soname"]: r for r in check(report, "libraries.load")["figures"]["libraries"]}


def test_cuda_11_8_falls_back_to_the_wheel_metadata_and_12_1_answers(wheels: Wheels, tmp_path: Path) -> None:
    report = run_probe(tmp_path, [lib_item("libcudart.so.11.0", "11.8"),
                                  lib_item("libcudart.so.12", "12.1", "torch", "nvidia-cuda-runtime-cu12")],
                       [wheels.lib(wheels.both)], [wheels.both])
    assert report["status"] == "pass" and report["tier"] == "libraries" and report["mode"] == "libraries"
    libs = records(report)
    cu11, cu12 = libs["libcudart.so.11.0"], libs["libcudart.so.12"]
    # measured: CUDA 11.8's cudaRuntimeGetVersion answers error 35 without a driver; 12.1's answers
    assert "error 35" in cu11["version_call"]
    assert cu11["version"] == "11.8.89" and "nvidia-cuda-runtime-cu11" in cu11["version_source"]
    assert cu11["path"] == str(wheels.lib(wheels.both) / "libcudart.so.11.0")
    assert cu12["version"] == "12.1" and cu12["version_source"] == "cudaRuntimeGetVersion"


def test_missing_library_is_the_silent_cpu_failure(wheels: Wheels, tmp_path: Path) -> None:
    """TensorFlow 2.12 in a CUDA-12-only environment: libcudart.so.11.0 is not there."""
    report = run_probe(tmp_path, [lib_item("libcudart.so.11.0", "11.8")], [wheels.lib(wheels.new)], [wheels.new])
    load = check(report, "libraries.load")
    assert report["status"] == "fail" and report["tier"] is None and load["status"] == "fail"
    assert "cannot load libcudart.so.11.0 (needed by tensorflow)" in load["message"]
    assert str(wheels.lib(wheels.new)) in load["message"]  # the path searched
    assert "nvidia-cuda-runtime-cu11" in load["message"]  # the distribution that provides it
    assert load["diagnosis"]["id"] == "silent-cpu"
    assert load["diagnosis"]["cause"].startswith("tensorflow was built for a CUDA whose library "
                                                 "libcudart.so.11.0 is not in this environment")


def test_older_minor_fails(wheels: Wheels, tmp_path: Path) -> None:
    report = run_probe(tmp_path, [lib_item("libcudart.so.12", "12.4", "torch", "nvidia-cuda-runtime-cu12")],
                       [wheels.lib(wheels.both)], [wheels.both])
    load = check(report, "libraries.load")
    assert load["status"] == "fail" and "reports 12.1" in load["message"] and "older than 12.4" in load["message"]
    assert load["diagnosis"]["id"] == "library-version-mismatch"
    assert "libcudart.so.12" in load["diagnosis"]["cause"]


def test_wrong_major_behind_the_right_soname_fails(wheels: Wheels, tmp_path: Path) -> None:
    """A libcudart.so.12 that is really CUDA 11's runtime (a hand-made symlink, a bad copy)."""
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "libcudart.so.12").symlink_to(wheels.lib(wheels.both) / "libcudart.so.11.0")
    report = run_probe(tmp_path, [lib_item("libcudart.so.12", "12.1", "torch", "nvidia-cuda-runtime-cu12")],
                       [odd], [wheels.both])
    load = check(report, "libraries.load")
    assert load["status"] == "fail" and "reports 11.8.89" in load["message"] and "wrong major" in load["message"]
    assert load["diagnosis"]["id"] == "library-version-mismatch"


def test_two_copies_on_the_search_path_are_reported(wheels: Wheels, tmp_path: Path) -> None:
    report = run_probe(tmp_path, [lib_item("libcudart.so.12", "12.1", "torch", "nvidia-cuda-runtime-cu12")],
                       [wheels.lib(wheels.both), wheels.lib(wheels.new)], [wheels.both, wheels.new])
    load = check(report, "libraries.load")
    assert load["status"] == "pass"
    record = records(report)["libcudart.so.12"]
    assert record["path"] == str(wheels.lib(wheels.both) / "libcudart.so.12") and record["version"] == "12.1"
    assert record["shadowed"] == [{"path": str(wheels.lib(wheels.new) / "libcudart.so.12"), "version": "12.4.127"}]
    assert "the later shadowed" in load["message"] and "12.4.127" in load["message"]


def test_a_library_ctypes_refuses_fails(wheels: Wheels, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "libcudart.so.12").write_bytes(b"<html>a proxy's error page, saved as a library</html>\n")
    report = run_probe(tmp_path, [lib_item("libcudart.so.12", "12.1", "torch", "nvidia-cuda-runtime-cu12")],
                       [bad], [])
    load = check(report, "libraries.load")
    assert load["status"] == "fail" and "ctypes refuses to load libcudart.so.12" in load["message"]
    assert "invalid ELF header" in load["message"] or "file too short" in load["message"]
    assert load["diagnosis"]["id"] == "library-refused"


def test_without_ctypes_the_tier_fails_never_skips(wheels: Wheels, tmp_path: Path) -> None:
    blocker = tmp_path / "noctypes"
    blocker.mkdir()
    (blocker / "ctypes.py").write_text("raise ImportError('No module named _ctypes')\n", encoding="utf-8")
    report = run_probe(tmp_path, [lib_item("libcudart.so.11.0", "11.8")], [wheels.lib(wheels.both)], [blocker])
    load = check(report, "libraries.load")
    assert report["status"] == "fail" and load["status"] == "fail"
    assert load["diagnosis"]["id"] == "library-tier-cannot-run"


def test_a_gpu_profile_with_nothing_to_check_fails(tmp_path: Path) -> None:
    report = run_probe(tmp_path, None, [], [])
    load = check(report, "libraries.load")
    assert load["status"] == "fail" and load["diagnosis"]["id"] == "library-tier-cannot-run"


# --- the compiled architecture list against the targets (in process: no library is loaded) --------

TF_212_ARCH = ["sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"]  # tf.sysconfig.get_build_info()


def arch_ctx(arch: list[str], targets: list[tuple[str, str]]) -> Any:
    common = probe_module("core.common")
    ctx = common.Context({"name": "t", "expected": {"gpu_targets": [
        {"name": name, "compute_capability": cc} for name, cc in targets]}}, diagnoses=common.load_diagnoses())
    ctx.library_frameworks = {"tensorflow": {"cuda_build": True, "arch_list": arch}}
    return ctx


def test_ptx_serves_a_newer_gpu_and_is_said_so() -> None:
    libs = probe_module("library.libs")
    message, figures = libs.check_arch(arch_ctx(TF_212_ARCH, [("A100", "8.0"), ("H100", "9.0")]))
    assert "tensorflow A100 sm_80: PTX compute_80 only" in message
    assert figures["targets"]["tensorflow H100 sm_90"] == {"sass": [], "ptx": ["compute_80"]}


def test_same_major_cubin_serves_a_higher_minor_but_not_across_majors() -> None:
    libs, common = probe_module("library.libs"), probe_module("core.common")
    message, _ = libs.check_arch(arch_ctx(["sm_80", "sm_86"], [("RTX 4090", "8.9")]))
    assert "sm_80, sm_86" in message
    ctx = arch_ctx(["sm_80", "sm_86"], [("H100", "9.0")])
    entry = common.run_check(ctx, "libraries.arch", "libraries", libs.check_arch)
    assert entry["status"] == "fail" and "no kernels for sm_90" in entry["message"]
    assert entry["diagnosis"]["id"] == "no-kernel-image"


def test_arch_without_targets_is_skipped_with_the_reason() -> None:
    # a stack with no GPU targets proves nothing about kernels: skipped, and says why
    libs, common = probe_module("library.libs"), probe_module("core.common")
    entry = common.run_check(arch_ctx(TF_212_ARCH, []), "libraries.arch", "libraries", libs.check_arch)
    assert entry["status"] == "skipped" and "no GPU targets" in entry["message"]

