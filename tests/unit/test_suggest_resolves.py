"""`envgen suggest` writes only sets pip can install: a matrix of requests (GPUs x drivers x framework sets x
newest/lts, the sets it wrote at d6f882d that uv refused among them) is answered, and the pip set of each profile
written is resolved for real by uv against PyPI for the profile's Python and the base image's platform, by the
resolution `envgen lock` and `check --resolve` make (lock_uv.uv_resolve, as test_lock_ranges.py's lock does).
Network: PyPI (reachable here and in CI).

Where PyPI's own torch wheel of the release is the build suggest chose (pytorch.yaml `pypi: true`), the profile pins
it plain and the set is resolved as written. Where it is not, the profile pins the build (`+cu118`, from
download.pytorch.org, which cannot be reached here) and PyPI's release of the same version is resolved in its place,
local label left out: it carries the same Requires-Dist but for the CUDA build's own nvidia-* pins
(check/packages/combined.py).
Each job says which pins were so replaced."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from envgen.config import load_config
from envgen.errors import BuildFailed, InputError
from envgen.kb import KnowledgeBase
from envgen.lock.lock_uv import uv_resolve
from envgen.lock.route import Route, resolution_route
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
    # TensorFlow gets no stack on compute capability 12.0 (tf-ptx-fails; test_suggest.py asserts the refusal)
    ("RTX 5090", "570.86.10", "pytorch", "newest"),
    # PyPI's torch wheel is the chosen build (torch 2.9.1 cu128, 2.14.1 cu130): pinned plain, resolved as written
    ("RTX 5090", "570.86.10", "pytorch", "lts"),
    ("H100", "580.65.06", "pytorch", "newest"),
]


@dataclass(frozen=True)
class Job:
    python: str
    route: Route  # where `envgen lock` / `check --resolve` would look, and with which environment
    pins: list[str]  # what is resolved: what pip installs, a build's local label left out
    replaced: list[str]  # the pins naming a build PyPI does not serve (`torch==2.7.1+cu118`), resolved without it


def _pip_set(kb: KnowledgeBase, data: dict[str, object]) -> Job:
    """What pip installs for a written profile, and the route `check --resolve` takes for it."""
    profile = Profile.model_validate(data)
    route = resolution_route(profile, kb, load_config(dict(os.environ)), dict(os.environ))
    installed = [*route.plan.pins.pip, *route.plan.pins.pip_extra]
    return Job(profile.python_minor, route, [p.split("+", 1)[0] for p in installed], [p for p in installed if "+" in p])


def _resolve(job: Job) -> str:
    """"" when uv resolves the set for the image's platform (the resolution `envgen lock` and `check --resolve`
    make: lock_uv.uv_resolve, sdists allowed as pip installs them), else uv's reason."""
    route = job.route
    try:
        uv_resolve(job.pins, job.python, route.glibc, route.platforms, find_links=[], index_url=route.index_url,
                   index_urls=[u for u in route.uv_extra if u not in route.index_urls],  # not the torch index
                   env={"UV_HTTP_RETRIES": "2", **route.uv_env}, only_binary=False)
    except (BuildFailed, InputError) as exc:
        return f"{exc.one_line()} {exc.tail[-400:]}"
    return ""


@pytest.fixture(scope="module")
def answers(kb: KnowledgeBase) -> list[tuple[str, Job, str]]:
    recipes = load_recipes()
    jobs = []
    for gpu, driver, frameworks, prefer in MATRIX:
        result = suggest(kb, recipes, Request(gpu, parse_frameworks(frameworks), driver, None, prefer))  # type: ignore[arg-type]
        for chosen in result.chosen:
            label = f"{gpu} {driver} {frameworks} {prefer}: {chosen.candidate.label()}"
            jobs.append((label, _pip_set(kb, chosen.profile)))
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(_resolve, [job for _, job in jobs]))
    return [(label, job, why) for (label, job), why in zip(jobs, done, strict=True)]


def test_the_matrix_has_at_least_twelve_requests() -> None:
    assert len(MATRIX) >= 12
    assert {prefer for *_, prefer in MATRIX} == {"newest", "lts"}
    assert len({frameworks for _, _, frameworks, _ in MATRIX}) == 3


def test_uv_resolves_every_set_suggest_writes(answers: list[tuple[str, Job, str]]) -> None:
    assert len(answers) >= len(MATRIX)
    assert all(any(p.startswith(("torch==", "tensorflow")) for p in job.pins) for _, job, _ in answers)
    refused = [f"{label} {job.pins}: {why}" for label, job, why in answers if why]
    assert not refused, "\n".join(refused)


def test_pypi_builds_are_resolved_as_written(answers: list[tuple[str, Job, str]]) -> None:
    """A pin is replaced only where the profile names a build PyPI does not serve; the matrix holds both kinds."""
    torches = {label: next((p for p in job.route.plan.pins.pip if p.startswith("torch==")), "")  # "": TF alone
               for label, job, _ in answers}
    plain = [label for label, torch in torches.items() if torch and "+" not in torch]
    assert len(plain) >= 2 and any("+" in torch for torch in torches.values())
    for label, job, _ in answers:
        assert bool(job.replaced) == ("+" in torches[label]), label
        assert all(p.split("==")[0] in ("torch", "torchvision", "torchaudio") for p in job.replaced), label


def test_the_traps_get_sets_that_differ_from_what_uv_refused(answers: list[tuple[str, Job, str]]) -> None:
    pins = {label.split(":")[0]: set(job.pins) for label, job, _ in answers}
    assert not {"tensorflow==2.13.0", "torch==2.6.0"} <= pins["RTX 4090 550.54.14 pytorch,tensorflow newest"]
    assert not {"tensorflow==2.13.0", "torch==2.5.1"} <= pins["H100 550.54.14 pytorch,tensorflow lts"]
    assert "tensorflow[and-cuda]==2.15.0" not in pins["L4 535.104.05 tensorflow lts"]
