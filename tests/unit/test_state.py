from __future__ import annotations

from pathlib import Path

from envgen.pipeline.state import Validation, ValidationStore


def test_record_and_get_roundtrip(tmp_path: Path) -> None:
    store = ValidationStore(tmp_path)
    v = Validation("sha256:abc", "pass", "cpu-only", "cpu-minimal", "h" * 64, "2026-11-29T00:00:00Z", {"x": 1})
    store.record(v)
    assert store.get("sha256:abc") == v
    assert store.get("abc") == v
    assert store.get("sha256:other") is None
    assert not list((tmp_path / "validations").glob(".tmp-*"))


def test_corrupt_record_reads_as_missing(tmp_path: Path) -> None:
    store = ValidationStore(tmp_path)
    (tmp_path / "validations").mkdir()
    (tmp_path / "validations" / "abc.json").write_text("{not json", encoding="utf-8")
    assert store.get("sha256:abc") is None
