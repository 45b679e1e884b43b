"""Golden files for every built-in profile: the rendered context is byte-identical run to run, and a
change shows as a unified diff. ``UPDATE_GOLDEN=1 pytest tests/unit/test_render_golden.py`` rewrites
them, removing the files a render no longer writes (tests/unit/test_golden_invariants.py removes whole stale
directories, and states what must be true of every golden whatever its bytes). Goldens hold the files as
rendered before the content hash is filled in, without the probe and the build scripts (envgen/sh/: copied,
not rendered; they have their own tests, and the Dockerfiles name the ones shipped; their bytes only move the
content hash)."""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render.core import render_in_memory
from envgen.render.files import PROBE_PREFIX, render_files
from envgen.render.plan import render_context
from envgen.render.scripts import CONTEXT_PREFIX as SCRIPTS_PREFIX

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PROFILES = [s.name for s in list_profiles({})]


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def _golden_view(profile_name: str, kb) -> dict[str, bytes]:
    plan = render_context(plan_image(load_profile(profile_name, env={}), kb))
    files = render_files(plan).files
    return {path: data for path, data in files.items() if not path.startswith((PROBE_PREFIX, SCRIPTS_PREFIX))}


def test_every_builtin_profile_has_goldens() -> None:
    assert set(PROFILES) >= {"cpu-minimal", "cpu-smoke", "legacy-maxwell", "modern-a100", "ngc-tensorflow"}


@pytest.mark.parametrize("name", PROFILES)
def test_render_matches_golden(name: str, kb) -> None:
    actual = _golden_view(name, kb)
    root = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        if root.exists():
            for old in sorted(root.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        for rel, data in actual.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    expected = {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }
    assert sorted(actual) == sorted(expected), "files differ; run UPDATE_GOLDEN=1 pytest to accept"
    problems = []
    for rel in sorted(actual):
        if actual[rel] != expected[rel]:
            diff = difflib.unified_diff(
                expected[rel].decode().splitlines(keepends=True),
                actual[rel].decode().splitlines(keepends=True),
                fromfile=f"golden/{name}/{rel}",
                tofile=f"rendered/{name}/{rel}",
            )
            problems.append("".join(diff))
    message = "rendered output differs from golden (UPDATE_GOLDEN=1 to accept):\n"
    assert not problems, message + "\n".join(problems)


@pytest.mark.parametrize("name", PROFILES)
def test_render_twice_is_byte_identical(name: str, kb) -> None:
    profile = load_profile(name, env={})
    first = render_in_memory(plan_image(profile, kb))
    second = render_in_memory(plan_image(profile, kb))
    assert first.files == second.files
    assert first.content_hash == second.content_hash
    assert first.tag == f"envgen/{name}:{first.content_hash[:12]}"


# Profiles outside the built-ins whose render reaches a branch none of them does (base_provides).
FIXTURE_PROFILES = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
FIXTURES = ["host-torch", "pip-requirements", "two-platforms-locked"]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_profile_render_matches_golden(name: str, kb) -> None:
    plan = render_context(plan_image(load_profile(str(FIXTURE_PROFILES / f"{name}.yaml"), env={}), kb))
    actual = {p: d for p, d in render_files(plan).files.items() if not p.startswith((PROBE_PREFIX, SCRIPTS_PREFIX))}
    root = GOLDEN / "fixtures" / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(root, ignore_errors=True)  # a file the render no longer writes goes too
        for rel, data in actual.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    expected = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    assert sorted(actual) == sorted(expected), "files differ; run UPDATE_GOLDEN=1 pytest to accept"
    for rel in sorted(actual):
        assert actual[rel] == expected[rel], f"golden/fixtures/{name}/{rel} differs (UPDATE_GOLDEN=1 rewrites)"
