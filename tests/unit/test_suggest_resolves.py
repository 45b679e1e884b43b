"""`envgen suggest` writes only sets pip can install: a matrix of requests (GPUs x drivers x framework sets x
newest/lts, the sets it wrote at d6f882d that uv refused among them) is answered, and the pip set of each profile
written is resolved for real by uv against PyPI for the profile's Python and the base image's platform (as
test_lock_ranges.py does). Network: PyPI (reachable here and in CI).

The torch wheels come from PyPI, local label left out: download.pytorch.org cannot be reached here, and PyPI's wheel
of a release carries the same Requires-Dist but for the CUDA build's own nvidia-* pins (check/combined.py)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envgen.kb import KnowledgeBase
from envgen.lock.lock_uv import uv_platform
from envgen.plan.install import install_plan
from envgen.plan.stack import resolve_rows
from envgen.profile import Profile
from envgen.suggest.recipes import load_recipes
from envgen.suggest.search import Request, parse_frameworks, suggest

MATRIX = [  # (GPU, driver, frameworks, prefer)
    ("RTX 4090", "550.54.14", "pytorch,tensorflow", "newest"),  # wrote TF 2.13.0 + torch 2.6.0: typing-extensions
    ("H100", "550.54.14", "pytorch,tensorflow", "lts"),  # wrote TF 2.13.0 + torch 2.5.1: the same
    ("GTX 950M", None, "pytorch,tensorflow", "newest"),  # wrote TF 2.13.0 + torch 2.13.0: the same
    ("RTX 3090", "525.60.13", "tensorflow", "newest"),  # wrote tensorflow[and-cuda] 2.14.0 on 3.11: no tensorrt wheel
    ("L4", "535.104.05", "tensorflow", "lts"),  # would write tensorflow[and-cuda] 2.15.0: no tensorrt-libs 8.6.1
    ("GTX 950M", "550.54.14", "pytorch,tensorflow", "lts"),
    ("A100", "470.82.01", "pytorch,tensorflow", "newest"),
    ("A100", "535.104.05", "pytorch,tensorflow", "lts"),
    ("RTX 3090", "470.82.01", "pytorch", "lts"),
    ("Tesla T4", "450.80.02", "pytorch,tensorflow", "newest"),
    ("Tesla V100", "418.87.01", "pytorch,tensorflow", "lts"),
    ("H100", "560.35.03", "pytorch", "newest"),
    ("GTX 1080", "470.82.01", "pytorch,tensorflow", "lts"),
    ("RTX 5090", "570.86.10", "pytorch,tensorflow", "newest"),
]


def _pip_set(kb: KnowledgeBase, data: dict[str, object]) -> tuple[str, str, list[str]]:
    """(Python, uv platform, the pins pip installs) of a written profile, as the render's install plan has them."""
    profile = Profile.model_validate(data)
    plan = install_plan(resolve_rows(profile, kb))
    return profile.python_minor, uv_platform(kb.glibc(profile.base)), [p.split("+", 1)[0] for p in plan.pip]


def _resolve(job: tuple[str, str, list[str]]) -> subprocess.CompletedProcess[str]:
    python, platform, pins = job
    uv = Path(sys.executable).with_name("uv")
    return subprocess.run([str(uv), "pip", "compile", "-", "--python-version", python, "--python-platform",
                           platform, "--no-header", "--quiet"], input="\n".join(pins) + "\n", capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def answers(kb: KnowledgeBase) -> list[tuple[str, tuple[str, str, list[str]], subprocess.CompletedProcess[str]]]:
    recipes = load_recipes()
    jobs = []
    for gpu, driver, frameworks, prefer in MATRIX:
        result = suggest(kb, recipes, Request(gpu, parse_frameworks(frameworks), driver, None, prefer))  # type: ignore[arg-type]
        for chosen in result.chosen:
            label = f"{gpu} {driver} {frameworks} {prefer}: {chosen.candidate.label()}"
            jobs.append((label, _pip_set(kb, chosen.profile)))
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(_resolve, [job for _, job in jobs]))
    return [(label, job, proc) for (label, job), proc in zip(jobs, done, strict=True)]


def test_the_matrix_has_at_least_twelve_requests() -> None:
    assert len(MATRIX) >= 12
    assert {prefer for *_, prefer in MATRIX} == {"newest", "lts"}
    assert len({frameworks for _, _, frameworks, _ in MATRIX}) == 3


def test_uv_resolves_every_set_suggest_writes(answers: list[tuple[str, tuple[str, str, list[str]],
                                                                  subprocess.CompletedProcess[str]]]) -> None:
    assert len(answers) >= len(MATRIX)
    refused = [f"{label} {pins}: {proc.stderr.strip()[-400:]}" for label, (_, _, pins), proc in answers
               if proc.returncode != 0]
    assert not refused, "\n".join(refused)


def test_the_traps_get_sets_that_differ_from_what_uv_refused(
        answers: list[tuple[str, tuple[str, str, list[str]], subprocess.CompletedProcess[str]]]) -> None:
    pins = {label.split(":")[0]: set(job[2]) for label, job, _ in answers}
    assert not {"tensorflow==2.13.0", "torch==2.6.0"} <= pins["RTX 4090 550.54.14 pytorch,tensorflow newest"]
    assert not {"tensorflow==2.13.0", "torch==2.5.1"} <= pins["H100 550.54.14 pytorch,tensorflow lts"]
    assert "tensorflow[and-cuda]==2.15.0" not in pins["L4 535.104.05 tensorflow lts"]
