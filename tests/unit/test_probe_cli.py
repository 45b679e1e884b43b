"""The probe's command line, run as the image runs it: a separate Python without site-packages (so
no framework is importable, whatever this machine has installed)."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.paths import probe_dir
from envgen.plan.image import plan_image
from envgen.profile.loader import load_profile
from envgen.render.core import render_in_memory

PROBE = probe_dir() / "envgen_probe.py"
no_gpu_here = pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="needs a machine without GPU")


def run_probe_cli(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-S", "-I", str(PROBE), "--json", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    assert json.loads(out.read_text()) == report
    assert report["schema"] == "envgen.smoke/1"
    return done.returncode, report


def expect_file(tmp_path: Path, profile: str, *, packages: bool = True) -> Path:
    """The profile's envgen/profile.json as envgen renders it into the image (its identity, the plan's expected)."""
    data = json.loads(render_in_memory(plan_image(load_profile(profile), load_kb())).files["envgen/profile.json"])
    data["expected"]["python"] = platform.python_version()  # the probe runs on this Python here, not the image's
    if not packages:  # the image's pip packages are not on this host: the import check would rightly fail
        data["expected"]["distributions"] = [d for d in data["expected"]["distributions"] if d["kind"] != "pip"]
    path = tmp_path / f"{profile}.json"
    path.write_text(json.dumps(data))
    return path


def checks(report: dict) -> dict[str, dict]:
    return {check["name"]: check for check in report["checks"]}


@no_gpu_here
def test_gpu_profile_without_gpu_fails_with_diagnoses(tmp_path) -> None:
    code, report = run_probe_cli(tmp_path, "--expect", str(expect_file(tmp_path, "modern-a100")))
    by_name = checks(report)
    assert code == 1 and report["status"] == "fail" and report["mode"] == "gpu"
    assert by_name["devices"]["status"] == "fail"
    assert by_name["devices"]["diagnosis"]["id"] == "no-gpu-in-container"
    assert by_name["torch.version"]["diagnosis"]["id"] == "framework-missing"
    assert by_name["tensorflow.version"]["status"] == "fail"
    # the library tier runs first and fails too: the frameworks it must inspect are missing
    assert by_name["libraries.frameworks"]["diagnosis"]["id"] == "framework-missing"
    # the plan's expected libraries are loaded all the same: this host has none of them
    assert by_name["libraries.load"]["status"] == "fail"
    assert by_name["libraries.load"]["message"].startswith("cannot load libcudart.so.11.0")
    # and the import check: the profile's pip package is not installed on this host's Python
    assert by_name["imports"]["diagnosis"]["id"] == "package-missing"
    assert report["summary"]["fail"] == 6 and report["tier"] is None


@no_gpu_here
def test_cpu_only_profile_passes_and_says_so(tmp_path) -> None:
    code, report = run_probe_cli(tmp_path, "--expect", str(expect_file(tmp_path, "cpu-minimal", packages=False)))
    by_name = checks(report)
    assert code == 0 and report["status"] == "pass" and report["mode"] == "cpu-only"
    assert by_name["devices"]["status"] == "skipped"
    assert by_name["devices"]["message"].startswith("CPU-only profile")
    assert report["profile"] == "cpu-minimal" and report["gpu_required"] is False


def test_python_mismatch_is_reported(tmp_path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"name": "old", "python": "3.6.15", "gpu": {"required": False}}))
    code, report = run_probe_cli(tmp_path, "--expect", str(path))
    assert code == 1
    python = checks(report)["python"]
    assert python["status"] == "fail" and python["diagnosis"]["id"] == "version-mismatch"


def test_table_output_and_bad_arguments(tmp_path) -> None:
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps({"name": "cpu", "gpu": {"required": False}}))
    done = subprocess.run([sys.executable, "-S", "-I", str(PROBE), "--expect", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout.startswith("envgen probe: PASS (cpu-only mode, profile cpu")
    assert "passed, 0 failed" in done.stdout
    bad = subprocess.run([sys.executable, "-S", "-I", str(PROBE), "--expect", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "cannot read --expect" in bad.stderr
