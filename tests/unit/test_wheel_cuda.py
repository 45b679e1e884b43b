"""`cuda:` is not required when the frameworks' wheels decide it: envgen fills it from the KB and says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envgen.profile import load_profile

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "users"


def test_torch_local_version_gives_the_cuda() -> None:
    profile = load_profile(str(CORPUS / "torch-cu121-no-cuda.yaml"))
    assert profile.cuda == "12.1"


def test_tensorflow_and_cuda_gives_its_tested_cuda() -> None:
    assert load_profile(str(CORPUS / "tf-and-cuda-no-cuda.yaml")).cuda == "12.2"


def test_show_prints_the_default_it_applied() -> None:
    out = subprocess.run([sys.executable, "-m", "envgen", "show", str(CORPUS / "torch-cu121-no-cuda.yaml")],
                         capture_output=True, text=True, timeout=60)
    assert "default applied: cuda: '12.1' (torch 2.2.2+cu121's wheels" in out.stdout + out.stderr
