"""`envgen suggest --frameworks vllm` / `sglang`: for an Ampere, a Hopper and a Blackwell GPU with their drivers,
the answer pins the engine in packages.pip and the torch its wheel pins (engine_requires.yaml) in frameworks, passes
`envgen check` with the same --gpu/--driver (the engine rules included), and its whole chain resolves: uv against
PyPI for the profile's Python and the image's platform (network: PyPI, as tests/unit/test_lock_ranges.py)."""

from __future__ import annotations

import os

import pytest

from envgen.check import HostSpec, check_profile
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.lock.lock_uv import uv_resolve
from envgen.lock.wheels import manylinux_platforms
from envgen.plan.image import ImagePlan, plan_image
from envgen.profile.model import FRAMEWORK_NAMES, Profile
from envgen.suggest.recipes import Recipes, load_recipes
from envgen.suggest.search import Request, SuggestResult, parse_frameworks, suggest

PAIRS = [("A100", "550.54.15"), ("H100", "550.54.15"), ("RTX 5090", "575.57.08")]
ENGINES = ["vllm", "sglang"]


@pytest.fixture(scope="module")
def recipes() -> Recipes:
    return load_recipes()


def _answer(kb: KnowledgeBase, recipes: Recipes, gpu: str, driver: str, engine: str) -> SuggestResult:
    return suggest(kb, recipes, Request(gpu, parse_frameworks(engine), driver))


def _engine_line(result: SuggestResult, engine: str) -> str:
    pip = result.chosen[0].profile["packages"]["pip"]  # type: ignore[index]
    return next(line for line in pip if line.startswith(engine + "=="))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("gpu", "driver"), PAIRS)
def test_the_answer_pins_the_engines_torch_and_passes_check(kb: KnowledgeBase, recipes: Recipes, gpu: str,
                                                            driver: str, engine: str) -> None:
    result = _answer(kb, recipes, gpu, driver, engine)
    assert result.single
    profile = result.chosen[0].profile
    version = _engine_line(result, engine).split("==")[1]
    row = kb.engine_row(engine, version)
    assert row is not None and row.pin("torch") is not None
    assert profile["frameworks"]["pytorch"] == row.pin("torch")  # type: ignore[index]  # plain: PyPI's wheel
    assert profile["python"] in row.python
    loaded = Profile.model_validate(profile, context={FRAMEWORK_NAMES: kb.framework_names})
    findings = check_profile(loaded, kb, HostSpec(gpus=[gpu], driver=driver))
    assert not [f for f in findings if f.severity == "error"], findings
    # engine warnings neither; a note may name optional kernels the GPU has no code for (FlashAttention 3's sm_90a
    # object on an A100): engine-kernel-arch-partial, info
    assert not [f for f in findings if f.code.startswith("engine-") and f.severity != "info"], findings


def test_a_pinned_engine_release_is_kept(kb: KnowledgeBase, recipes: Recipes) -> None:
    result = suggest(kb, recipes, Request("A100", parse_frameworks("vllm==0.11.0"), "550.54.15"))
    assert _engine_line(result, "vllm") == "vllm==0.11.0"
    assert str(result.chosen[0].profile["frameworks"]["pytorch"]).startswith("2.8.0")  # type: ignore[index]


def test_an_engine_beside_tensorflow_is_refused(kb: KnowledgeBase, recipes: Recipes) -> None:
    with pytest.raises(InputError, match="more than one serving stack"):
        suggest(kb, recipes, Request("A100", parse_frameworks("vllm,tensorflow"), "550.54.15"))


def _pypi_pins(kb: KnowledgeBase, plan: ImagePlan) -> list[str]:
    """The plan's pins, which PyPI serves as they are: the torch suggest writes is PyPI's own wheel of the release
    (pytorch.yaml `pypi: true`), pinned without a local label, and that wheel is the build the image reports
    (framework_requires.yaml's row, read from PyPI's torch wheel). Nothing is mapped: a `+cuXXX` pin would need
    download.pytorch.org, which is not reachable here."""
    torch = next(p for p in plan.pip if p.startswith("torch=="))
    version = torch.split("==")[1]
    assert "+" not in version, f"{torch}: not PyPI's wheel"
    row = kb.requires_of("torch", version)
    assert row is not None and plan.expected.torch == f"{version}+{row.build}", (torch, plan.expected.torch)
    return list(plan.pip)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("gpu", "driver"), PAIRS)
def test_the_whole_chain_resolves_against_pypi(kb: KnowledgeBase, recipes: Recipes, gpu: str, driver: str,
                                               engine: str) -> None:
    result = _answer(kb, recipes, gpu, driver, engine)
    plan = plan_image(Profile.model_validate(result.chosen[0].profile,
                                             context={FRAMEWORK_NAMES: kb.framework_names}), kb)
    pins = _pypi_pins(kb, plan)
    resolved = uv_resolve(pins, plan.profile.python_minor, None, manylinux_platforms(), find_links=[],
                          index_urls=[], index_url=None, env=dict(os.environ))
    names = {name: entry.version for name, entry in resolved.entries.items()}
    line = _engine_line(result, engine)
    assert names[engine] == line.split("==")[1]
    assert names["torch"] == pins[0].split("==")[1]  # the engine's install leaves the profile's torch as it is



def test_init_refuses_an_engine_without_a_gpu(kb: KnowledgeBase, recipes: Recipes) -> None:
    from envgen.suggest.init import InitRequest, init_profile

    with pytest.raises(InputError, match="GPU serving engine") as err:
        init_profile(kb, recipes, InitRequest(name="x", frameworks=parse_frameworks("sglang"), gpu=None,
                                              driver=None, python=None))
    assert err.value.fix is not None and "envgen init --gpu A100 --frameworks sglang" in err.value.fix
