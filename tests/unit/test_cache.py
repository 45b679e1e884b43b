"""The one keyed store (envgen.cache): an entry is found only under the key of its inputs (envgen's version among
them), a torn or foreign entry is a miss, writes are atomic and prune the kind's stale entries."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import envgen.cache as cache
from envgen.cache import MISSING, Store


@pytest.mark.parametrize("codec", ["pickle", "json"])
def test_a_value_comes_back_under_its_key_only(tmp_path: Path, codec: str) -> None:
    store = Store(tmp_path, "thing-", codec=codec)
    key = store.key("input", b"\x00bytes")
    assert store.get(key) is MISSING
    for value in (None, [1, "two"], {"a": [3]}):  # None is a value (an empty YAML text), not a miss
        store.put(key, value)
        assert store.get(key) == value
    assert store.get(store.key("input", b"\x00other")) is MISSING
    assert store.key("a", "b") != store.key("ab") != store.key("a\0b")  # parts are separated
    assert Store(tmp_path, "other-").key("input") != Store(tmp_path, "thing-").key("input")
    assert [p.name for p in tmp_path.iterdir()] == [f"thing-{key}.{codec}"]


def test_the_key_covers_envgens_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = Store(None, "kb-").key("same inputs")
    monkeypatch.setattr(cache, "__version__", "9.9.9")
    assert Store(None, "kb-").key("same inputs") != before


def test_a_torn_or_foreign_entry_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path, "thing-")
    key = store.key("x")
    store.put(key, {"whole": True})
    path = store.path(key)
    assert path is not None
    path.write_bytes(path.read_bytes()[:5])
    assert store.get(key) is MISSING
    path.write_bytes(b"\x80\x05garbage")
    assert store.get(key) is MISSING


def test_no_directory_keeps_nothing(tmp_path: Path) -> None:
    store = Store(None, "thing-")
    store.put(store.key("x"), 1)
    assert store.get(store.key("x")) is MISSING and store.path("k") is None
    assert cache.cache_dir({"ENVGEN_NO_CACHE": "1", "ENVGEN_CACHE_DIR": str(tmp_path)}) is None


def test_an_unwritable_directory_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = Store(blocker / "sub", "thing-")
    store.put(store.key("x"), 1)
    assert store.get(store.key("x")) is MISSING


def test_a_write_prunes_the_kinds_stale_entries(tmp_path: Path) -> None:
    month_ago = time.time() - 31 * 86400
    stale, recent, foreign = tmp_path / "thing-old.pickle", tmp_path / "thing-recent.pickle", tmp_path / "x-old.pickle"
    for path in (stale, recent, foreign):
        path.write_bytes(b"old")
    for path in (stale, foreign):
        os.utime(path, (month_ago, month_ago))
    Store(tmp_path, "thing-").put("new", 1)
    assert not stale.exists() and recent.exists() and foreign.exists()
    Store(tmp_path, "thing-", keep_days=0).put("newest", 2)  # the newest only (the KB)
    assert sorted(p.name for p in tmp_path.glob("thing-*")) == ["thing-newest.pickle"] and foreign.exists()
