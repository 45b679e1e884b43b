"""The serving-engine refresh tool (tools.kbrefresh.engines) on recorded PyPI inputs: the simple-index entries
and the core metadata of vllm 0.11.0, sglang 0.5.3 and flashinfer-cubin 0.6.9 (tests/fixtures/pypi/, read from
PyPI by the tool itself, by range requests into the wheels); the rows it makes must be the KB's rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from envgen.kb import load_kb
from tools.kbrefresh import engines

PYPI = Path(__file__).resolve().parents[1] / "fixtures" / "pypi"
CASES = [("vllm", "0.11.0"), ("sglang", "0.5.3"), ("flashinfer-cubin", "0.6.9")]


def _row(name: str, version: str) -> dict[str, Any]:
    files = json.loads((PYPI / f"{name}-{version}.simple.json").read_text())["files"]
    entry, minors = engines.pick(files, "2024-12-01")[Version(version)]
    metadata = (PYPI / (entry["filename"] + ".metadata")).read_text()
    return engines.row_of(name, version, entry, minors, engines.torch_builds(), metadata)


@pytest.mark.parametrize(("name", "version"), CASES)
def test_rows_are_the_kbs(name: str, version: str) -> None:
    row = _row(name, version)
    kb_row = load_kb().engine_row(name, version)
    assert kb_row is not None
    assert row["source"] == kb_row.source
    assert row["python"] == kb_row.python
    assert row.get("build") == kb_row.build
    assert [tuple(r.get(k, "") for k in ("name", "spec", "extra")) for r in row["requires"]] == \
        [(r.name, r.spec, r.extra) for r in kb_row.requires]


def test_vllm_pins_torch_and_carries_its_cuda_build() -> None:
    row = _row("vllm", "0.11.0")
    reqs = {(r["name"], r.get("extra", "")): r.get("spec", "") for r in row["requires"]}
    assert reqs[("torch", "")] == "==2.8.0"
    assert reqs[("xformers", "")] == "==0.0.32.post1"
    assert reqs[("flashinfer-python", "flashinfer")] == "==0.3.1"
    assert row["requires_python"] == "<3.14,>=3.9"
    assert row["python"] == ["3.9", "3.10", "3.11", "3.12", "3.13"]  # cp38-abi3, cut by Requires-Python
    assert (row["build"], row["build_from"]) == ("cu128", "torch==2.8.0: that wheel's row in framework_requires.yaml")
    assert "sha256 3861c75ff2b12e24f6d179ff5c084d791b42ded8675d76c8706697c79f68cd62" in row["source"]


def test_sglang_pins_its_kernel_and_flashinfer() -> None:
    row = _row("sglang", "0.5.3")
    reqs = {r["name"]: r.get("spec", "") for r in row["requires"] if not r.get("extra")}
    assert reqs["sgl-kernel"] == "==0.3.14.post1"
    assert reqs["flashinfer-python"] == "==0.4.0rc3"
    assert reqs["torch"] == "==2.8.0"


def test_flashinfer_cubin_declares_no_coupling() -> None:
    """flashinfer-cubin's metadata requires nothing: the version coupling is enforced at run time only."""
    assert _row("flashinfer-cubin", "0.6.9")["requires"] == []


def test_unpublished_distributions_are_listed_not_guessed() -> None:
    unread = {u.distribution for u in load_kb().engine_unread}
    assert "flashinfer-jit-cache" in unread
    assert not any(r.distribution == "flashinfer-jit-cache" for r in load_kb().engine_requires)
