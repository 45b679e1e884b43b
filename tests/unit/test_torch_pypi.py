"""PyPI's own torch (issue #33): where the KB read from PyPI's wheel that its plain `torch==X` is the build a profile
needs (pytorch.yaml `pypi: true`: torch/version.py's cuda), a profile that names no build gets PyPI's wheel, pinned
without a local label and with no index of PyTorch's; a profile naming the build (`+cu128`) keeps PyTorch's index."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile

PROFILE = """\
name: torch-pypi
base: debian:bookworm-slim
local_base: true
installer: pip
cuda: "{cuda}"
python: "3.11"
frameworks:
  pytorch: "{torch}"
gpu:
  targets: ["H100"]
"""


def _plan(tmp_path: Path, torch: str, cuda: str = "12.8") -> tuple[list[str], list[str], str | None]:
    path = tmp_path / "torch-pypi.yaml"
    path.write_text(PROFILE.format(torch=torch, cuda=cuda), encoding="utf-8")
    plan = plan_image(load_profile(str(path), env={}), load_kb())
    return plan.framework_pip, plan.pip_index_urls, plan.expected.torch


def test_the_pypi_build_is_pinned_plain_and_needs_no_pytorch_index(tmp_path: Path) -> None:
    pins, indexes, expected = _plan(tmp_path, "2.8.0")
    assert pins == ["torch==2.8.0"] and indexes == []
    assert expected == "2.8.0+cu128"  # what PyPI's wheel reports: torch/version.py __version__ '2.8.0+cu128'


def test_a_named_build_keeps_pytorch_index(tmp_path: Path) -> None:
    pins, indexes, _ = _plan(tmp_path, "2.8.0+cu128")
    assert pins == ["torch==2.8.0+cu128"] and indexes == ["https://download.pytorch.org/whl/cu128"]


@pytest.mark.parametrize(("torch", "cuda", "tag"), [("2.8.0", "12.6", "cu126"), ("2.8.0", "12.9", "cu129")])
def test_a_build_pypi_does_not_serve_comes_from_pytorch_index(tmp_path: Path, torch: str, cuda: str,
                                                              tag: str) -> None:
    pins, indexes, _ = _plan(tmp_path, torch, cuda)
    assert pins == [f"torch=={torch}+{tag}"] and indexes == [f"https://download.pytorch.org/whl/{tag}"]


def test_every_pypi_row_says_it_was_read_from_pypis_wheel() -> None:
    """`pypi: true` rests on the row's own reading of the wheel, never on memory; one per release at most."""
    kb = load_kb()
    marked = [(release.version, v) for release in kb.pytorch for v in release.variants if v.pypi]
    assert len(marked) >= 30
    for version, variant in marked:
        assert f"(PyPI's torch wheel is the {variant.tag} build" in variant.source, (version, variant.tag)
    assert len({version for version, _ in marked}) == len(marked)
