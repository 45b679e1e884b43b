"""One plan per command (issue #28): `check`, `render`, `lock`'s route, `suggest` per candidate and the tag
`smoke PROFILE` looks up each make the profile's image plan once, and render it at most once (`build`: the
pipeline tests count it, tests/pipeline/test_pipeline_minimal.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envgen.cli import app
from tests.counting import count_plans


def test_check_plans_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = count_plans(monkeypatch)
    result = CliRunner().invoke(app, ["check", "cpu-smoke"])
    assert "looked at:" in result.output, result.output
    assert (counts.plans, counts.renders) == (1, 0)


def test_render_plans_and_renders_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    counts = count_plans(monkeypatch)
    result = CliRunner().invoke(app, ["render", "cpu-smoke", "--output", str(tmp_path / "ctx")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ctx" / "Dockerfile").is_file()
    assert (counts.plans, counts.renders) == (1, 1)


def test_the_tag_of_a_profile_plans_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`envgen smoke|run|push PROFILE` look the image up by the tag the profile renders to: one plan, one render."""
    from envgen.pipeline.resolve import profile_tag
    from envgen.profile import load_profile

    profile = load_profile("cpu-smoke", env={})
    counts = count_plans(monkeypatch)
    tag, chash = profile_tag(profile, env={})
    assert tag.endswith(chash[:12])
    assert (counts.plans, counts.renders) == (1, 1)


def test_lock_route_plans_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`envgen lock` (and `check --resolve`) resolve the plan's sets: one plan, no render written."""
    from envgen.config import UserConfig
    from envgen.kb import load_kb
    from envgen.lock.lock import resolution_route
    from envgen.profile import load_profile

    profile, kb = load_profile("cpu-smoke", env={}), load_kb()
    counts = count_plans(monkeypatch)
    route = resolution_route(profile, kb, UserConfig(), {})
    assert route.plan.image.framework_pip == ["tensorflow-cpu==2.12.0", "torch==2.13.0+cpu"]
    assert (counts.plans, counts.renders) == (1, 0)


def test_suggest_plans_each_candidate_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each candidate `suggest` judges is planned once; a candidate that gets safe pins (numpy<2 beside an old
    torch) is another profile, planned once more."""
    import envgen.suggest.search as search
    from envgen.kb import load_kb
    from envgen.suggest.recipes import load_recipes
    from envgen.suggest.request import Request

    counts = count_plans(monkeypatch)
    per_candidate: list[tuple[int, int]] = []  # (plans made, safe pins added)
    judge, safe = search._judge, search.with_safe_pins
    added: list[int] = []

    def counted_safe(*args: Any) -> Any:
        plan, pins = safe(*args)
        added.append(len(pins))
        return plan, pins

    def counted_judge(*args: Any) -> Any:
        before = counts.plans
        suggestion = judge(*args)
        per_candidate.append((counts.plans - before, added[-1]))
        return suggestion

    monkeypatch.setattr(search, "_judge", counted_judge)
    monkeypatch.setattr(search, "with_safe_pins", counted_safe)
    search.suggest(load_kb(), load_recipes(), Request(gpu="RTX 3090", frameworks={"pytorch": None},
                                                      driver="470.57.02"))
    assert per_candidate
    assert all(plans == 1 + (pins > 0) for plans, pins in per_candidate), per_candidate


def test_check_resolve_plans_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --resolve` resolves the plan the check judged (uv against PyPI, as test_resolve_witness.py)."""
    counts = count_plans(monkeypatch)
    result = CliRunner().invoke(app, ["check", "cpu-minimal", "--resolve"])
    assert "looked at:" in result.output, result.output
    assert (counts.plans, counts.renders) == (1, 0)
