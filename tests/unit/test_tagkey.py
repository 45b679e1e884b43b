"""The content hash `envgen run|smoke|push PROFILE` look the image up by, kept in the store (envgen.pipeline.tagkey):
the SAME tag as rendering in memory for every built-in profile, and rendered again when any input changes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import envgen.pipeline.tagkey as tagkey
from envgen.pipeline.resolve import profile_tag
from envgen.pipeline.session import Session
from envgen.profile import list_profiles, load_profile
from envgen.render.core import render_in_memory
from tests.counting import count_plans


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(tmp_path), "ENVGEN_CACHE_DIR": str(tmp_path / "cache"), **more}


def test_every_profile_gets_the_tag_a_render_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(_env(tmp_path))
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"  # and the fixtures: conda, NGC, uv...
    names = [s.name for s in list_profiles({})] + [str(p) for p in sorted(fixtures.glob("*.yaml"))]
    assert len(names) >= 7
    rendered = {}
    for name in names:
        profile = load_profile(name, session.env, kb=session.kb)
        made = render_in_memory(session.plan_of(profile), session.config).content_hash
        rendered[name] = (f"{session.config.namespace}/{profile.name}:{made[:12]}", made)
        assert profile_tag(profile, session=session) == rendered[name], name  # rendered, kept
    counts = count_plans(monkeypatch)
    fresh = Session(_env(tmp_path))  # another command: every tag from the store, none rendered
    for name in names:
        assert profile_tag(load_profile(name, fresh.env, kb=fresh.kb), session=fresh) == rendered[name], name
    assert (counts.plans, counts.renders) == (0, 0)


def _counted_tag(ref: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    session = Session(env)
    counts = count_plans(monkeypatch)
    tag = profile_tag(load_profile(ref, env, kb=session.kb), session=session)
    return tag, counts.renders


def test_a_changed_input_renders_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    source = next(s for s in list_profiles({}) if s.name == "cpu-smoke").path
    shutil.copy(source, folder / "cpu-smoke.yaml")
    env = _env(tmp_path, ENVGEN_PROFILE_PATH=str(folder))
    mine = str(folder / "cpu-smoke.yaml")
    first, renders = _counted_tag(mine, env, monkeypatch)
    assert renders == 1 and _counted_tag(mine, env, monkeypatch) == (first, 0)
    (folder / "cpu-smoke.notes.txt").write_text("beside the profile\n", encoding="utf-8")
    assert _counted_tag(mine, env, monkeypatch)[1] == 1  # a file beside it named after it (its locks are)
    (tmp_path / "config.yaml").write_text("mirrors:\n  pip_index_url: https://pypi.example/simple\n")
    with_mirror = {**env, "ENVGEN_CONFIG": str(tmp_path / "config.yaml")}
    assert _counted_tag(mine, with_mirror, monkeypatch)[1] == 1  # the user's config
    text = (folder / "cpu-smoke.yaml").read_text(encoding="utf-8")
    (folder / "cpu-smoke.yaml").write_text(text.replace("builds anywhere", "edited"), encoding="utf-8")
    assert _counted_tag(mine, env, monkeypatch)[1] == 1  # the profile
    monkeypatch.setattr(tagkey, "code_digest", lambda: b"other code")
    assert _counted_tag(mine, env, monkeypatch)[1] == 1  # envgen's code, templates, probe
    assert _counted_tag(mine, {**env, "ENVGEN_NO_CACHE": "1"}, monkeypatch)[1] == 1  # no store: rendered


def test_facts_see_private_state_and_sort_sets() -> None:
    from envgen.profile.model import Mirrors

    set_one = Mirrors.model_validate({"pip_index_url": "https://a.example/simple"})
    default = Mirrors()
    assert tagkey.facts(set_one) != tagkey.facts(default)
    assert "_fields_set=set{" in tagkey.facts(set_one)  # which keys the user wrote: merge_mirrors reads them
    assert tagkey.facts({"b": 1, "a": {2, 1}}) == tagkey.facts({"a": {1, 2}, "b": 1})
