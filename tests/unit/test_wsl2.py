"""WSL2 as a platform (`check --platform wsl2`, and what the doctor detects): CUDA runs on the Windows driver,
which must be a WSL-capable one (the Windows minimums of the CUDA table, and the WSL floor of platforms in
cuda.yaml), and NVIDIA's WSL 2 support covers Pascal and later GPUs: a GTX 950M (Maxwell) laptop is told."""

from __future__ import annotations

import subprocess
import sys

from envgen.check import HostSpec, check_profile
from envgen.kb import load_kb
from envgen.profile import load_profile


def _codes(profile: str, host: HostSpec) -> dict[str, str]:
    return {f.code: f.severity for f in check_profile(load_profile(profile), load_kb(), host)}


def test_wsl2_platform_row_is_sourced() -> None:
    row = load_kb().platform("wsl2")
    assert row is not None and row.driver_table == "windows" and row.cc_min == "6.0"
    assert "wsl-user-guide" in row.source


def test_gtx950m_on_wsl2_is_told_maxwell_is_outside_nvidias_wsl_support() -> None:
    codes = _codes("legacy-maxwell", HostSpec(gpus=["GTX 950M"], driver="512.15", platform="wsl2"))
    assert codes.get("wsl-gpu-unsupported") == "warning"
    assert "wsl-driver-too-old" not in codes


def test_wsl2_driver_below_the_wsl_floor() -> None:
    codes = _codes("legacy-maxwell", HostSpec(gpus=["GTX 950M"], driver="451.67", platform="wsl2"))
    assert "wsl-driver-too-old" in codes


def test_wsl2_uses_the_windows_driver_minimums() -> None:
    # 520.61.05 is CUDA 11.8's Linux minimum; its Windows minimum is 520.06: on WSL2 a 520.06 driver serves 11.8
    linux = _codes("a100-pypi", HostSpec(gpus=["RTX 3090"], driver="520.06"))
    wsl = _codes("a100-pypi", HostSpec(gpus=["RTX 3090"], driver="520.06", platform="wsl2"))
    assert "driver-too-old" in linux or "driver-minor-compat" in linux
    assert "driver-too-old" not in wsl and "driver-minor-compat" not in wsl


def test_cli_takes_platform_wsl2() -> None:
    out = subprocess.run([sys.executable, "-m", "envgen", "check", "legacy-maxwell", "--platform", "wsl2",
                          "--gpu", "GTX 950M", "--driver", "512.15"], capture_output=True, text=True)
    assert "wsl-gpu-unsupported" in out.stdout, out.stdout + out.stderr
