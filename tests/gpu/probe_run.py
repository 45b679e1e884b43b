"""Helpers for the GPU tests: run the probe as the image does, a separate Python process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "envgen" / "smoke" / "probe" / "envgen_probe.py"
EXPECT_HERE = Path(__file__).resolve().parent / "expect_here.py"


def gpu_present() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return done.returncode == 0 and "GPU" in done.stdout


def run_probe(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    out = tmp_path / "report.json"
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run([sys.executable, str(PROBE), "--json", "--out", str(out), *args],
                          capture_output=True, text=True, env=full_env, timeout=300)
    report = json.loads(done.stdout)
    assert json.loads(out.read_text()) == report
    return done.returncode, report


def write_expect(tmp_path: Path, *extra: str) -> Path:
    path = tmp_path / "expect.json"
    subprocess.run([sys.executable, str(EXPECT_HERE), str(path), *extra], check=True)
    return path


def by_name(report: dict) -> dict[str, dict]:
    return {check["name"]: check for check in report["checks"]}
