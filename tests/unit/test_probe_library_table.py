"""The probe ships its library table as JSON (standard library only inside images); it is generated from the
knowledge base, so the two cannot drift apart."""

from __future__ import annotations

from envgen.kb import load_kb
from envgen.paths import probe_package_dir
from envgen.smoke.library_table import render

SHIPPED = probe_package_dir() / "library" / "libraries.json"


def test_shipped_table_is_the_generated_one() -> None:
    assert SHIPPED.read_text(encoding="utf-8") == render(load_kb()), (
        "regenerate: python -m envgen.smoke.library_table > envgen/smoke/probe/envgen_checks/library/libraries.json")


def test_cuda13_names_seen_on_the_h200() -> None:
    # docs/validation/2026-11-30-h200-libraries: torch 2.11.0+cu130 loads these from nvidia/cu13/lib
    kb = load_kb()
    row = kb.cuda_library("cublas")
    assert row is not None
    assert (row.soname("13.0"), row.pip_name(13), row.lib_dir(13)) == ("libcublas.so.13", "nvidia-cublas", "cu13")
    cudnn = kb.cuda_library("cudnn")
    assert cudnn is not None and (cudnn.pip_name(13), cudnn.lib_dir(13)) == ("nvidia-cudnn-cu13", "cudnn")
