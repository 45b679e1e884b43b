"""The installed wheel works on its own: profiles, templates, knowledge base and probe are inside it.

Builds the wheel, installs it into a fresh virtual environment and runs `envgen` from another
directory, so nothing can come from the source checkout.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(ROOT)],
                   check=True)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = next((work / "dist").glob("envgen-*.whl"))
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True)
    return venv


def test_wheel_carries_data_files(installed: Path) -> None:
    wheel = next(installed.parent.glob("dist/envgen-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("envgen/_data/profiles/legacy-maxwell.yaml", "envgen/kb/data/tensorflow.yaml",
                     "envgen/smoke/probe/envgen_probe.py", "envgen/smoke/probe/envgen_checks/core/diagnoses.json",
                     "envgen/smoke/probe/envgen_checks/library/libraries.json", "envgen/suggest/recipes.yaml"):
        assert expected in names
    assert any(n.startswith("envgen/_data/templates/") for n in names)
    # the KB refresh tools and their upstream copies are a checkout's developer tool (tools/kbrefresh), not shipped
    assert not [n for n in names if n.startswith(("tools/", "envgen/kb/refresh/"))]


def run_envgen(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "envgen"), *args], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_check_from_another_directory(installed: Path, tmp_path: Path) -> None:
    ok = run_envgen(installed, "check", "legacy-maxwell", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = run_envgen(installed, "check", "legacy-maxwell", "--gpu", "H100", cwd=tmp_path)
    assert bad.returncode == 1 and "no kernel image" in bad.stdout


def test_suggest_from_another_directory(installed: Path, tmp_path: Path) -> None:
    result = run_envgen(installed, "suggest", "--gpu", "RTX 3090", "--driver", "470.82.01",
                        "--frameworks", "tensorflow,pytorch", "-o", str(tmp_path / "s.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    check = run_envgen(installed, "check", str(tmp_path / "s.yaml"), "--gpu", "RTX 3090", "--driver", "470.82.01",
                       cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert list((tmp_path / ".cache" / "envgen").glob("kb-*.pickle")), "the KB cache lives in $HOME/.cache/envgen"


def test_render_from_another_directory(installed: Path, tmp_path: Path) -> None:
    result = run_envgen(installed, "render", "cpu-smoke", "-o", str(tmp_path / "ctx"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ctx" / "Dockerfile").is_file()
    assert (tmp_path / "ctx" / "envgen" / "probe" / "envgen_probe.py").is_file()
    assert (tmp_path / "ctx" / "envgen" / "probe" / "envgen_checks" / "gpu" / "torch_checks.py").is_file()
