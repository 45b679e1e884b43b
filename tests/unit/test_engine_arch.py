"""The serving engines' kernel arch lists: the fat-binary reader's arch-specific codes on real recorded headers
(tests/fixtures/fatbin/README.md), the refresh module on a wheel made of them, and the rows it wrote
(engine_arches.yaml) as check and suggest read them."""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from pathlib import Path

import pytest

from envgen.kb import KnowledgeBase
from envgen.kb.refresh import engine_arch
from envgen.kb.refresh.fatbin import ArchSummary, FatbinScanner

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fatbin" / "sglang-kernel-flashmla-headers.bin.gz"


def _scan(blob: bytes, size: int, variants: bool) -> ArchSummary:
    scanner = FatbinScanner(variants=variants)
    for at in range(0, len(blob), size):
        scanner.feed(blob[at : at + size])
    return ArchSummary.of(scanner.fatbins)


def test_arch_specific_cubins_are_named_as_cuobjdump_names_them() -> None:
    """cuobjdump --list-elf on the whole object: 57 sm_90a, 57 sm_100, 57 sm_103a (fixture README)."""
    blob = gzip.decompress(FIXTURE.read_bytes())
    for size in (13, 65536, len(blob)):
        summary = _scan(blob, size, variants=True)
        assert summary.fatbins == 57
        assert summary.counts == {"sm_90a": 57, "sm_100": 57, "sm_103a": 57}
    plain = _scan(blob, len(blob), variants=False)  # torch/TensorFlow rows are read without the suffix
    assert plain.counts == {"sm_90": 57, "sm_100": 57, "sm_103": 57}
    assert plain.codes("sm") == ["sm_90", "sm_100", "sm_103"]


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "sglang_kernel-9.9.0-cp310-abi3-manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("sgl_kernel/__init__.py", "x = 1\n")
        archive.writestr("sgl_kernel/flashmla_ops.abi3.so", b"\x7fELF" + gzip.decompress(FIXTURE.read_bytes()))
        archive.writestr("sgl_kernel/plain.abi3.so", b"\x7fELF no fat binary here")
    return wheel


def test_refresh_reads_each_shared_object_and_checks_the_sha256(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    row = engine_arch.read("sglang-kernel", "9.9.0", str(wheel), sha)
    assert row["objects"] == [{"file": "sgl_kernel/flashmla_ops.abi3.so", "sm": ["sm_90a", "sm_100", "sm_103a"],
                               "ptx": [], "fatbins": 57}]  # an object without fat binaries is left out
    assert sha in row["source"] and wheel.name in row["source"]
    with pytest.raises(ValueError, match="!= PyPI's"):
        engine_arch.read("sglang-kernel", "9.9.0", str(wheel), "0" * 64)


def test_refresh_reads_the_newest_of_each_minor_line_first() -> None:
    found = [("vllm", v, f"u{v}", "s") for v in ("0.9.0", "0.9.2", "0.10.0", "0.10.1.1", "0.8.5")]
    assert [w[1] for w in engine_arch.order(found)] == ["0.10.1.1", "0.9.2", "0.8.5", "0.10.0", "0.9.0"]


def test_refresh_lists_what_the_budget_left_unread(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    rows, missed = engine_arch.fetch([("sglang-kernel", "9.9.0", str(wheel), sha)], budget_s=-1, workers=1)
    assert rows == [] and missed[0]["version"] == "9.9.0" and "budget" in missed[0]["why"]
