"""The serving engines' kernel arch lists: the fat-binary reader's arch-specific codes on real recorded headers
(tests/fixtures/fatbin/README.md), the refresh module on a wheel made of them, and the rows it wrote
(engine_arches.yaml) as check and suggest read them."""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from pathlib import Path

import pytest
import yaml

from envgen.check import HostSpec, check_profile
from envgen.check.findings import Finding
from envgen.kb import KnowledgeBase
from envgen.kb.engine_kernels import arch_specific, compiled_rows, core_fails_on, core_objects
from envgen.kb.versions import vtuple
from envgen.profile import load_profile
from envgen.suggest.engines import engine_requests
from envgen.suggest.request import Request
from tools.kbrefresh import engine_arch
from tools.kbrefresh.fatbin import ArchSummary, FatbinScanner

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
def test_the_recorded_rows_name_their_wheel_and_sha256(kb: KnowledgeBase) -> None:
    """Every row cites the wheel engine_requires.yaml names for that release, with the same sha256."""
    assert len(kb.engine_arches) >= 30
    for row in kb.engine_arches:
        req = kb.engine_row(row.distribution, row.version)
        assert req is not None and req.version == row.version
        sha = req.source.rsplit("sha256 ", 1)[1].rstrip(")")
        assert f"sha256 {sha}, equal to the bytes read" in row.source
        assert row.objects and all(o.sm or o.ptx for o in row.objects)


def _findings(kb: KnowledgeBase, tmp_path: Path, gpu: str, torch: str, pip: str, cuda13: bool = False) -> list[Finding]:
    data = {"name": "arch", "installer": "pip", "gpu": {"targets": [gpu]}, "frameworks": {"pytorch": torch},
            "packages": {"pip": [pip]}}
    data |= ({"base": "nvidia/cuda:13.0.1-cudnn-runtime-ubuntu24.04", "python": "3.12", "cuda": "13.0"} if cuda13
             else {"base": "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04", "python": "3.10", "cuda": "12.8"})
    path = tmp_path / "arch.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return [f for f in check_profile(load_profile(str(path)), kb, HostSpec()) if f.code.startswith("engine-kernel")]


def test_core_kernels_without_the_gpu_are_an_error_quoting_the_engine(kb: KnowledgeBase, tmp_path: Path) -> None:
    """vLLM 0.20's _C.abi3.so is built for sm_75 and newer, without PTX: a V100 (7.0) has no code in it."""
    found = _findings(kb, tmp_path, "V100", "2.11.0", "vllm==0.20.0", cuda13=True)
    error = next(f for f in found if f.code == "engine-kernel-arch")
    assert error.severity == "error" and "vllm/_C.abi3.so" in error.message
    assert "compute capability 7.0" in error.message
    assert "no kernel image is available for execution on the device" in error.message
    assert "vllm-0.20.0-" in error.source and "issues/18995" in error.source
    assert "use vllm 0.19.1 (the newest recorded release whose core kernels include compute capability 7.0)" \
        in error.fix


def test_sgl_kernel_pinned_by_sglang_without_the_gpu(kb: KnowledgeBase, tmp_path: Path) -> None:
    """sglang 0.5.9 pins sgl-kernel 0.3.21, whose common ops hold sm_100a (arch-specific) but nothing for a B300
    (10.3): the finding names the kernel package and who pinned it."""
    found = _findings(kb, tmp_path, "B300", "2.9.1", "sglang==0.5.9")
    error = next(f for f in found if f.code == "engine-kernel-arch")
    assert "sgl-kernel==0.3.21 (pinned by sglang==0.5.9)" in error.message and "common_ops.abi3.so" in error.message
    assert not [f for f in _findings(kb, tmp_path, "H100", "2.9.1", "sglang==0.5.9") if f.severity == "error"]


def test_hopper_only_objects_are_a_note_on_other_gpus(kb: KnowledgeBase, tmp_path: Path) -> None:
    """vLLM's FlashAttention 3 object carries sm_90a cubins only: on an A100 a note names it, no error."""
    found = _findings(kb, tmp_path, "A100", "2.10.0", "vllm==0.19.1")
    assert [f.severity for f in found] == ["info"]
    assert "_vllm_fa3_C.abi3.so (sm_90a, arch-specific only)" in found[0].message
    assert all("_vllm_fa3_C" not in f.message for f in _findings(kb, tmp_path, "H100", "2.10.0", "vllm==0.19.1"))


def test_the_core_objects_named_are_the_ones_the_rows_hold(kb: KnowledgeBase) -> None:
    """Every core object engine_traps.yaml names is in the rows, and every release has one."""
    core = core_objects(kb)
    held = {o.file for row in kb.engine_arches for o in row.objects}
    assert core and core <= held
    assert all(any(o.file in core for o in row.objects) for row in kb.engine_arches)
    fa3 = next(o for o in kb.engine_arches[-1].objects if o.file.endswith("_vllm_fa3_C.abi3.so"))
    assert arch_specific(fa3) and fa3.sm == ["sm_90a"]


def test_suggest_writes_no_release_whose_core_kernels_exclude_the_gpu(kb: KnowledgeBase) -> None:
    """Every vLLM release suggest may try for a V100 has core code for 7.0 (0.20 and newer have none)."""
    tried = engine_requests(kb, Request("V100", {"vllm": None}, None), "vllm")
    assert tried
    for sub in tried:
        row = kb.engine_row("vllm", sub.pip[0].split("==")[1])
        assert row is not None
        assert not [r for r in compiled_rows(kb, row) if core_fails_on(kb, r, "7.0")]
        assert vtuple(row.version) < (0, 20)


def test_merge_keeps_what_the_file_holds(tmp_path: Path) -> None:
    """--merge: the rows and the unread releases not tried again stay (a spec that matches no release here)."""
    into = tmp_path / "engine_arches.yaml"
    row = {"distribution": "vllm", "version": "0.19.1", "objects": [], "source": "https://example.invalid/x.whl"}
    unread = {"distribution": "vllm", "version": "0.6.5", "source": "https://example.invalid/y.whl", "why": "budget"}
    into.write_text(yaml.safe_dump({"engine_arches": [row], "engine_arches_unread": [unread]}), encoding="utf-8")
    assert engine_arch.main(["vllm==0.0.1", "--merge", "--into", str(into)]) == 0
    doc = yaml.safe_load(into.read_text(encoding="utf-8"))
    assert doc["engine_arches"] == [row]
    assert doc["engine_arches_unread"][0] == unread and doc["engine_arches_unread"][1] == engine_arch.CUBIN_ONLY
