"""The Dockerfiles from steps (render/steps.py, render/dockerfile.py): each RUN reaches exactly the build scripts
it runs (BuildKit: a bind mount per script; classic: a COPY of them just before it), so what another layer runs
leaves a layer's cache key alone; the templates keep only the file's shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envgen import layout
from envgen.kb import load_kb
from envgen.paths import build_scripts_dir, templates_dir
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render.core import render_in_memory
from envgen.render.steps import Emitter, script_closures

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
PROFILES = [s.name for s in list_profiles({})] + [str(FIXTURES / "host-torch.yaml")]
MAX_CONTROL_TAGS = 20  # issue 28: 167 at d6f882d, 60 at c4ee6b3 (its limit), 11 once the stages are typed
_RUNS = re.compile(rf"sh {re.escape(layout.SCRIPTS)}/([A-Za-z0-9_.-]+\.sh)")
_BOUND = re.compile(rf"--mount=type=bind,source={layout.CONTEXT_SCRIPTS}/([^,]+),target={re.escape(layout.SCRIPTS)}/")


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def _instructions(text: str) -> list[str]:
    """The Dockerfile's instructions, continued lines joined, comments left out."""
    out, current = [], ""
    for line in text.splitlines():
        if not current and (not line or line.startswith("#")):
            continue
        current += line + "\n"
        if not line.endswith("\\"):
            out.append(current)
            current = ""
    return out


def test_the_docker_templates_keep_the_shape_only() -> None:
    tags = sum(path.read_text().count("{%") for path in (templates_dir() / "docker").rglob("*.j2"))
    assert tags <= MAX_CONTROL_TAGS, f"templates/docker has {tags} Jinja control tags; move logic to render/"


@pytest.mark.parametrize("name", PROFILES, ids=lambda n: Path(n).stem)
def test_each_buildkit_run_binds_exactly_the_scripts_it_runs(name: str, kb) -> None:
    files = render_in_memory(plan_image(load_profile(name, env={}), kb)).files
    closures = script_closures(build_scripts_dir())
    emit = Emitter(True, closures)
    for run in (i for i in _instructions(files["Dockerfile"].decode()) if i.startswith("RUN ")):
        assert f"source={layout.CONTEXT_SCRIPTS}," not in run, "a RUN binds the whole scripts folder:\n" + run
        assert set(_BOUND.findall(run)) == set(emit.scripts(_RUNS.findall(run))), run
        for script in _BOUND.findall(run):
            assert files[f"{layout.CONTEXT_SCRIPTS}/{script}"] == (build_scripts_dir() / script).read_bytes()


@pytest.mark.parametrize("name", PROFILES, ids=lambda n: Path(n).stem)
def test_each_classic_run_copies_the_scripts_it_runs_just_before_it(name: str, kb) -> None:
    files = render_in_memory(plan_image(load_profile(name, env={}), kb)).files
    emit = Emitter(False, script_closures(build_scripts_dir()))
    instructions = _instructions(files["Dockerfile.classic"].decode())
    assert not any(i.startswith(f"COPY {layout.CONTEXT_SCRIPTS}/ ") for i in instructions)
    for before, run in zip(instructions, instructions[1:], strict=False):
        if run.startswith("RUN ") and _RUNS.search(run):
            copied = before.split()[1:-1] if before.startswith("COPY ") else []
            assert copied == [f"{layout.CONTEXT_SCRIPTS}/{s}" for s in emit.scripts(_RUNS.findall(run))], run


def test_an_extra_pip_package_leaves_the_environment_step_as_it_was(tmp_path: Path, kb) -> None:
    """The +1 package rebuild (issue 28): with colorama in packages.pip, extras.sh is shipped too; the environment
    layer's RUN and every file it binds stay byte-identical, so BuildKit's cache key does (cpu-smoke, unlocked)."""
    text = (Path(__file__).resolve().parents[2] / "profiles" / "cpu-smoke.yaml").read_text()
    assert "  pip:\n    - numpy==1.23.5\n" in text
    contexts = []
    for name, pip in (("none", "  pip: []\n"), ("plus", "  pip:\n    - colorama==0.4.6\n")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text.replace("name: cpu-smoke", "name: plus").replace("  pip:\n    - numpy==1.23.5\n", pip))
        contexts.append(render_in_memory(plan_image(load_profile(str(path), env={}), kb)).files)
    steps = []
    for files in contexts:
        runs = [i for i in _instructions(files["Dockerfile"].decode()) if " -m venv " in i]
        assert len(runs) == 1
        bound = {s: files[f"{layout.CONTEXT_SCRIPTS}/{s}"] for s in _BOUND.findall(runs[0])}
        steps.append((runs[0], bound, files["requirements.lock"]))
    assert steps[0] == steps[1]
    extras = f"{layout.CONTEXT_SCRIPTS}/extras.sh"
    assert extras not in contexts[0] and extras in contexts[1]  # what moved the whole folder's key before
