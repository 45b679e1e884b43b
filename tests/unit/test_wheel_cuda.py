"""`cuda:` is not required when the frameworks' wheels decide it: planning fills it from the KB and says so (loading
keeps what the file wrote)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envgen.kb import KnowledgeBase, load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "users"


def _planned(name: str, kb: KnowledgeBase) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(cuda as loaded, cuda as planned, the plan's defaults)."""
    loaded = load_profile(str(CORPUS / name), kb=kb)
    plan = plan_image(loaded, kb)
    return loaded.cuda, plan.profile.cuda, plan.defaults


def test_torch_local_version_gives_the_cuda() -> None:
    kb = load_kb()
    written, planned, defaults = _planned("torch-cu121-no-cuda.yaml", kb)
    assert (written, planned) == (None, "12.1")
    assert defaults == ("cuda: '12.1' (torch 2.2.2+cu121's wheels, pytorch.yaml#2.2.2)",)


def test_tensorflow_and_cuda_gives_its_tested_cuda() -> None:
    written, planned, _ = _planned("tf-and-cuda-no-cuda.yaml", load_kb())
    assert (written, planned) == (None, "12.2")


def test_show_prints_the_default_it_applied() -> None:
    out = subprocess.run([sys.executable, "-m", "envgen", "show", str(CORPUS / "torch-cu121-no-cuda.yaml")],
                         capture_output=True, text=True, timeout=60)
    assert "default applied: cuda: '12.1' (torch 2.2.2+cu121's wheels" in out.stdout + out.stderr
