"""The loaded-profile cache `envgen check` reads: the same profile as a fresh load, and never a stale one."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.errors import ProfileError
from envgen.files import CACHE_DAYS
from envgen.kb.cache import load_kb_keyed
from envgen.profile import cache as profile_cache
from envgen.profile import load_profile
from envgen.profile.loader import profile_notes, profile_source

PARENT = """name: parent
base: debian:bookworm-slim
python: "3.11"
gpu:
  required: false
packages:
  pip: [six==1.16.0]
"""
CHILD = """name: child
extends: parent
packages:
  pip: [six==1.17.0]
"""


@pytest.fixture()
def kb_and_key(tmp_path: Path) -> tuple[object, str]:
    return load_kb_keyed(tmp_path / "kb")


def _load(ref: str, tmp_path: Path, kb_and_key: tuple[object, str], env: dict[str, str]) -> object:
    kb, key = kb_and_key
    return profile_cache.load_profile_cached(ref, tmp_path / "cache", kb, key, env)  # type: ignore[arg-type]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = profile_cache.load_source

    def counted(source, *args):  # type: ignore[no-untyped-def]
        calls.append(source.name)
        return real(source, *args)

    monkeypatch.setattr(profile_cache, "load_source", counted)
    return calls


def _profiles(tmp_path: Path) -> dict[str, str]:
    user = tmp_path / "profiles"
    user.mkdir()
    (user / "parent.yaml").write_text(PARENT)
    (user / "child.yaml").write_text(CHILD)
    return {"ENVGEN_PROFILE_PATH": str(user)}


def test_a_cached_profile_is_the_fresh_one(tmp_path: Path, kb_and_key: tuple[object, str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("modern-a100", "ngc-tensorflow", "legacy-maxwell"):  # ngc-tensorflow takes defaults from the KB
        fresh = load_profile(name, kb=kb_and_key[0])  # type: ignore[arg-type]
        first = _load(name, tmp_path, kb_and_key, {})
        calls = _counting(monkeypatch)
        second = _load(name, tmp_path, kb_and_key, {})
        assert calls == [], "the second load is served from the cache"
        monkeypatch.undo()
        for got in (first, second):
            assert got == fresh
            assert profile_source(got) == profile_source(fresh)  # type: ignore[arg-type]
            assert profile_notes(got) == profile_notes(fresh)  # type: ignore[arg-type]


def test_editing_the_file_or_its_parent_loads_afresh(tmp_path: Path, kb_and_key: tuple[object, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    env = _profiles(tmp_path)
    assert _load("child", tmp_path, kb_and_key, env).packages.pip == ["six==1.17.0"]  # type: ignore[attr-defined]
    parent = Path(env["ENVGEN_PROFILE_PATH"]) / "parent.yaml"
    parent.write_text(PARENT.replace('"3.11"', '"3.12"'))
    assert _load("child", tmp_path, kb_and_key, env).python == "3.12"  # type: ignore[attr-defined]
    child = Path(env["ENVGEN_PROFILE_PATH"]) / "child.yaml"
    child.write_text(CHILD.replace("1.17.0", "1.16.0"))
    assert _load("child", tmp_path, kb_and_key, env).packages.pip == ["six==1.16.0"]  # type: ignore[attr-defined]
    calls = _counting(monkeypatch)
    _load("child", tmp_path, kb_and_key, env)
    assert calls == []


def test_a_file_that_now_shadows_a_parent_loads_afresh(tmp_path: Path, kb_and_key: tuple[object, str]) -> None:
    env = _profiles(tmp_path)
    assert _load("child", tmp_path, kb_and_key, env).python == "3.11"  # type: ignore[attr-defined]
    first = tmp_path / "first"
    first.mkdir()
    (first / "parent.yaml").write_text(PARENT.replace('"3.11"', '"3.10"'))
    env["ENVGEN_PROFILE_PATH"] = f"{first}:{env['ENVGEN_PROFILE_PATH']}"
    assert _load("child", tmp_path, kb_and_key, env).python == "3.10"  # type: ignore[attr-defined]


def test_another_kb_or_code_loads_afresh(tmp_path: Path, kb_and_key: tuple[object, str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _load("ngc-tensorflow", tmp_path, kb_and_key, {})
    calls = _counting(monkeypatch)
    _load("ngc-tensorflow", tmp_path, (kb_and_key[0], "another-kb"), {})
    assert calls == ["ngc-tensorflow"]
    monkeypatch.setattr(profile_cache, "_code", lambda: b"other code")
    _load("ngc-tensorflow", tmp_path, kb_and_key, {})
    assert calls == ["ngc-tensorflow", "ngc-tensorflow"]


def test_a_profile_that_fails_is_never_cached(tmp_path: Path, kb_and_key: tuple[object, str]) -> None:
    env = _profiles(tmp_path)
    child = Path(env["ENVGEN_PROFILE_PATH"]) / "child.yaml"
    child.write_text(CHILD + "pyhton: '3.11'\n")
    for _ in range(2):
        with pytest.raises(ProfileError, match="pyhton"):
            _load("child", tmp_path, kb_and_key, env)
    assert not list((tmp_path / "cache").glob("profile-*.pickle"))


def test_a_torn_entry_is_ignored(tmp_path: Path, kb_and_key: tuple[object, str]) -> None:
    _load("modern-a100", tmp_path, kb_and_key, {})
    [entry] = (tmp_path / "cache").glob("profile-*.pickle")
    entry.write_bytes(entry.read_bytes()[:40])
    assert _load("modern-a100", tmp_path, kb_and_key, {}).name == "modern-a100"  # type: ignore[attr-defined]


def test_entries_not_used_for_a_month_are_pruned_when_one_is_written(tmp_path: Path,
                                                                   kb_and_key: tuple[object, str]) -> None:
    import os
    import time

    _load("modern-a100", tmp_path, kb_and_key, {})
    [fresh] = (tmp_path / "cache").glob("profile-*.pickle")
    stale = tmp_path / "cache" / "profile-0123.pickle"
    stale.write_bytes(b"old")
    month_ago = time.time() - (CACHE_DAYS + 1) * 86400
    os.utime(stale, (month_ago, month_ago))
    _load("cpu-minimal", tmp_path, kb_and_key, {})
    left = sorted(p.name for p in (tmp_path / "cache").glob("profile-*.pickle"))
    assert stale.name not in left and fresh.name in left and len(left) == 2
