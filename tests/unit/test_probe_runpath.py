"""The probe's RUNPATH reader (probe_libs_runpath): where a framework's own dlopen finds a library it opens lazily
(PyPI's torch 2.8 and libcusolver.so.11, seen in the vLLM image of tests/pipeline/test_pipeline_vllm.py). The ELF
files here are made by the test (ELF64 little-endian: a header, a .dynstr, a .dynamic), the layout ld.so reads."""

from __future__ import annotations

import struct
import sys
import types
from pathlib import Path

import pytest
from test_probe_helpers import probe_module

DT_RPATH, DT_RUNPATH, SHT_STRTAB, SHT_DYNAMIC = 15, 29, 3, 6


def elf(path: Path, tags: dict[int, str]) -> Path:
    """A minimal ELF64 shared object whose dynamic section holds ``tags`` (tag -> string)."""
    strtab = b"\0"
    entries = b""
    for tag, text in tags.items():
        entries += struct.pack("<qQ", tag, len(strtab))
        strtab += text.encode() + b"\0"
    entries += struct.pack("<qQ", 0, 0)  # DT_NULL
    str_off = 64
    dyn_off = str_off + len(strtab)
    sh_off = dyn_off + len(entries)
    header = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, sh_off, 0, 64,
                                                                0, 0, 64, 3, 0)
    sections = struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    sections += struct.pack("<IIQQQQIIQQ", 0, SHT_STRTAB, 0, 0, str_off, len(strtab), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 0, SHT_DYNAMIC, 0, 0, dyn_off, len(entries), 1, 0, 8, 16)
    path.write_bytes(header + strtab + entries + sections)
    return path


def test_runpath_expands_origin_and_prefers_runpath(tmp_path: Path) -> None:
    runpath = probe_module("library.libs_runpath").runpath
    lib = elf(tmp_path / "libtorch_cuda.so", {DT_RPATH: "/old", DT_RUNPATH: "$ORIGIN/../../nvidia/cusolver/lib:/opt/x"})
    assert runpath(str(lib)) == [str((tmp_path / "../../nvidia/cusolver/lib").resolve()), "/opt/x"]
    assert runpath(str(elf(tmp_path / "rpath.so", {DT_RPATH: "${ORIGIN}/a"}))) == [str(tmp_path / "a")]
    assert runpath(str(elf(tmp_path / "none.so", {}))) == []
    (tmp_path / "text.so").write_text("not an ELF file")
    assert runpath(str(tmp_path / "text.so")) == [] and runpath(str(tmp_path / "absent.so")) == []


def test_a_lazily_opened_library_is_found_through_the_framework_s_runpath(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    (site / "fakefw" / "lib").mkdir(parents=True)
    (site / "nvidia" / "cusolver" / "lib").mkdir(parents=True)
    (site / "nvidia" / "cusolver" / "lib" / "libcusolver.so.11").write_bytes(b"")
    (site / "fakefw" / "__init__.py").write_text("")
    elf(site / "fakefw" / "lib" / "libfw_cuda.so", {DT_RUNPATH: "$ORIGIN/../../nvidia/cusolver/lib"})
    module = types.ModuleType("fakefw")
    module.__file__ = str(site / "fakefw" / "__init__.py")
    monkeypatch.setitem(sys.modules, "fakefw", module)
    through = probe_module("library.libs_runpath").through_runpath
    found = through("libcusolver.so.11", ["fakefw"])
    assert found == (str(site / "nvidia" / "cusolver" / "lib" / "libcusolver.so.11"),
                     str(site / "fakefw" / "lib" / "libfw_cuda.so"))
    assert through("libcudart.so.13", ["fakefw"]) is None and through("libcusolver.so.11", ["absent"]) is None
