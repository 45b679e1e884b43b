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


def test_the_tag_of_a_profile_plans_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`envgen smoke|run|push PROFILE` look the image up by the tag the profile renders to: one plan, one render;
    none where the store keeps the hash of a render of the same inputs (envgen.pipeline.tagkey)."""
    from envgen.pipeline.resolve import profile_tag
    from envgen.profile import load_profile

    env = {"HOME": str(tmp_path), "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    profile = load_profile("cpu-smoke", env=env)
    counts = count_plans(monkeypatch)
    tag, chash = profile_tag(profile, env=env)
    assert tag.endswith(chash[:12])
    assert (counts.plans, counts.renders) == (1, 1)
    assert profile_tag(profile, env=env) == (tag, chash)
    assert (counts.plans, counts.renders) == (1, 1)
    assert profile_tag(profile, env={**env, "ENVGEN_NO_CACHE": "1"}) == (tag, chash)
    assert (counts.plans, counts.renders) == (2, 2)


def test_lock_route_plans_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`envgen lock` (and `check --resolve`) resolve the plan's sets: one plan, no render written."""
    from envgen.config import UserConfig
    from envgen.kb import load_kb
    from envgen.lock.route import resolution_route
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


# --- one plan and one KB load per command (issue #41) ---------------------------------------------------------------

class KbLoads:
    """Counts the knowledge base loads of a command: a call of ``envgen.kb.cache.load_kb_keyed`` (check's cache, YAML on
    a miss) or of ``envgen.kb.loader.load_kb`` outside it. A profile hook on the real functions' code objects, so that
    a module that bound the name at import is counted too (nothing replaced)."""

    def __init__(self) -> None:
        import envgen.kb.cache as cache
        import envgen.kb.loader as loader

        self.keyed, self.parsed = cache.load_kb_keyed.__code__, loader.load_kb.__code__
        self.count = 0
        self._inside = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if frame.f_code is self.keyed:
            if event == "call":
                self.count += self._inside == 0
                self._inside += 1
            elif event == "return":
                self._inside -= 1
        elif frame.f_code is self.parsed and event == "call" and self._inside == 0:
            self.count += 1


def counted(monkeypatch: pytest.MonkeyPatch, run: Any) -> tuple[int, int, Any]:
    """(plans, KB loads, what ``run`` returned)."""
    import sys
    import threading

    plans, loads = count_plans(monkeypatch), KbLoads()
    sys.setprofile(loads)
    threading.setprofile(loads)  # type: ignore[arg-type]
    try:
        result = run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return plans.plans, loads.count, result


def invoke(*argv: str) -> Any:
    return lambda: CliRunner().invoke(app, list(argv))


@pytest.mark.parametrize("argv", [
    ("check", "cpu-smoke"),
    ("show", "cpu-smoke"),
    ("lock", "cpu-smoke", "--wheelhouse", "/nonexistent-wheelhouse"),
])
def test_a_command_plans_once_and_loads_the_kb_once(monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> None:
    plans, loads, result = counted(monkeypatch, invoke(*argv))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert (plans, loads) == (1, 1), result.output


def test_render_loads_the_kb_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    plans, loads, result = counted(monkeypatch, invoke("render", "cpu-smoke", "--output", str(tmp_path / "ctx")))
    assert result.exit_code == 0, result.output
    assert (plans, loads) == (1, 1)


@pytest.mark.parametrize("fmt", ["devcontainer", "compose", "apptainer", "bake", "k8s", "slurm"])
def test_export_plans_each_profile_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    """`export` writes, notes what check rejects, names the unbuilt images and the registry's digests from one plan
    per profile and one KB (it planned each profile 2-3 times and read the KB 3 times)."""
    argv = ["export", "cpu-smoke", "cpu-minimal", "--format", fmt, "--output", str(tmp_path / "out")]
    plans, loads, result = counted(monkeypatch, invoke(*argv, *(["--registry", "localhost:5000"]
                                                                 if fmt == "k8s" else [])))
    assert result.exit_code == 0, result.output
    assert (plans, loads) == (2, 1), result.output


def test_suggest_loads_the_kb_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _, loads, result = counted(monkeypatch, invoke("suggest", "--gpu", "RTX 3090", "--frameworks", "pytorch",
                                                   "--driver", "470.57.02"))
    assert result.exit_code == 0, result.output
    assert loads == 1


@pytest.mark.parametrize("argv", [("smoke", "cpu-smoke"), ("run", "cpu-smoke", "true"), ("push", "cpu-smoke"),
                                  ("doctor", "--profile", "cpu-smoke")])
def test_an_engine_command_plans_once_and_loads_the_kb_once(monkeypatch: pytest.MonkeyPatch,
                                                          argv: tuple[str, ...]) -> None:
    """The profile's tag looked up (no image of cpu-smoke under this session's namespace: the command stops there
    with its one line) or, for doctor, the host judged against it and its downloads tried: one plan, one KB (doctor
    planned three times: the verdict's two checks and the download probe); the tag's plan none where the store keeps
    the hash of an earlier render of the same inputs. `run` loads the KB only to render the tag (the profile and the
    tag come from the store by the KB's key): none where the store keeps it. `run` with an image, through the
    container, is timed by bench/bench_run.py."""
    plans, loads, result = counted(monkeypatch, invoke(*argv))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert (plans == 1 if argv[0] == "doctor" else plans <= 1), (plans, loads, result.output)
    assert loads == (plans if argv[0] == "run" else 1), (plans, loads, result.output)


def test_a_run_by_image_reference_gates_with_one_plan(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`envgen run IMAGE` with GPUs: the host gate judges the profile the image's label names with the command's one
    plan and KB (doctor's gate_image loaded the profile by label and planned again inside the verdict). The host is
    a recorded one (an A100 with driver 525, tests/fixtures/hosts/a100-525: no GPU here), which runs modern-a100."""
    import envgen.pipeline.tiers as tiers
    from envgen.host import RecordedProvider, collect
    from envgen.pipeline.run import _gate_and_route
    from envgen.pipeline.session import Session
    from envgen.vocabulary import LABEL_GPU_REQUIRED, LABEL_PROFILE

    host = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "a100-525"
    monkeypatch.setattr(tiers, "host_facts", lambda env=None, kb=None: collect(RecordedProvider(host), kb))
    session = Session({"HOME": str(tmp_path), "ENVGEN_CACHE_DIR": str(tmp_path / "cache")})
    labels = {LABEL_PROFILE: "modern-a100", LABEL_GPU_REQUIRED: "true"}
    plans, loads, route = counted(monkeypatch, lambda: _gate_and_route(labels, "all", "auto", session))
    assert route is None  # the NVIDIA runtime's route
    assert (plans, loads) == (1, 1)
    plans, loads, route = counted(monkeypatch, lambda: _gate_and_route(labels, "all", "auto", session))
    assert (plans, loads) == (0, 0)  # the same command asking again: its plan and KB


def test_build_plans_once_and_loads_the_kb_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`build` of a profile its check refuses stops after the check: everything before the engine, counted."""
    (tmp_path / "bad.yaml").write_text("name: bad\nbase: debian:bookworm-slim\nlocal_base: true\ninstaller: pip\n"
                                       'python: "3.12"\ngpu:\n  required: false\n')
    plans, loads, result = counted(monkeypatch, invoke("build", str(tmp_path / "bad.yaml")))
    assert result.exit_code != 0 and "fails its check" in result.output, result.output
    assert (plans, loads) == (1, 1)


@pytest.mark.parametrize("name", ["cpu-smoke", "ngc-tensorflow", "modern-a100"])
def test_loading_a_profile_reads_no_kb(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Profile loading reads its small data files (framework names, base families), never the knowledge base:
    what the KB gives (an NGC release's CUDA, a torch tag's) is planning's (plan.defaults)."""
    from envgen.profile import load_profile

    plans, loads, profile = counted(monkeypatch, lambda: load_profile(name, env={}))
    assert profile.name == name
    assert (plans, loads) == (0, 0)


# --- the plan holds no knowledge base (issue #41) -------------------------------------------------------------------

def _reachable(root: Any) -> list[tuple[str, Any]]:
    """Every value reachable from ``root`` through fields, attributes, items and values, with its path."""
    import enum
    import types

    seen: set[int] = set()
    out: list[tuple[str, Any]] = []
    todo: list[tuple[str, Any]] = [("plan", root)]
    while todo:
        path, value = todo.pop()
        if id(value) in seen or isinstance(value, (str, bytes, int, float, bool, type(None), enum.Enum, type,
                                                   types.FunctionType, types.ModuleType, Path)):
            continue
        seen.add(id(value))
        out.append((path, value))
        if isinstance(value, dict):
            todo += [(f"{path}[{k!r}]", v) for k, v in value.items()]
        elif isinstance(value, (list, tuple, set, frozenset)):
            todo += [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            todo += [(f"{path}.{k}", v) for k, v in getattr(value, "__dict__", {}).items()]
            todo += [(f"{path}.{k}", getattr(value, k)) for k in getattr(type(value), "__slots__", ())
                     if isinstance(k, str) and hasattr(value, k)]
    return out


def test_the_plan_holds_no_knowledge_base() -> None:
    """``ImagePlan`` carries what planning worked out as plain fields: no field or attribute is (or reaches) the
    knowledge base or the stack it was looked up with, so a reader of the plan (render above all) cannot ask the KB
    again; what needs the KB takes it from its caller (check's context, the lock's judge)."""
    import dataclasses
    import typing

    from envgen.kb import KnowledgeBase, load_kb
    from envgen.plan.image import ImagePlan, plan_image
    from envgen.plan.stack import Stack
    from envgen.profile import load_profile

    hints = typing.get_type_hints(ImagePlan)
    assert {f.name for f in dataclasses.fields(ImagePlan)} >= {"expected", "preflight", "slim", "base_part"}
    assert not [n for n, t in hints.items() if "KnowledgeBase" in str(t) or "Stack" in str(t)], hints
    kb = load_kb()
    for name in ("cpu-smoke", "modern-a100", "ngc-tensorflow", "legacy-maxwell", "a100-pypi"):
        plan = plan_image(load_profile(name, env={}), kb)
        for attribute in dir(ImagePlan):  # the properties too
            if not attribute.startswith("_") and not callable(getattr(plan, attribute, None)):
                assert not isinstance(getattr(plan, attribute), (KnowledgeBase, Stack)), (name, attribute)
        found = [path for path, value in _reachable(plan) if isinstance(value, (KnowledgeBase, Stack))]
        assert found == [], (name, found)
        assert len(_reachable(plan)) > 50  # the walk went through the plan's parts
