"""NVIDIA_REQUIRE_CUDA: what the image declares, evaluated exactly as the NVIDIA Container Toolkit does
(libnvidia-container src/cli/dsl.c: rules separated by spaces are alternatives, conditions joined by commas
must all hold; an unknown fact satisfies its condition), must agree with `check --driver`."""

from __future__ import annotations

import re

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.plan.require import ToolkitFacts, driver_cuda, evaluate
from envgen.profile import list_profiles, load_profile
from envgen.render.core import render_in_memory

# The shape of the nvidia/cuda:12.1.1 images' own value (their Dockerfile's ENV line), shortened to four rules.
BASE_12_1 = ("cuda>=12.1 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 "
             "brand=geforce,driver>=470,driver<471 brand=tesla,driver>=525,driver<526")


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def _declared(name: str, kb) -> str | None:
    ctx = render_in_memory(plan_image(load_profile(name), kb))
    text = ctx.files["Dockerfile"].decode()
    m = re.search(r'NVIDIA_REQUIRE_CUDA="([^"]*)"', text)
    return m.group(1) if m else None


def test_space_is_or_comma_is_and_brand_counts() -> None:
    tesla_470 = ToolkitFacts(cuda="11.4", driver="470.82.01", brand="Tesla")
    assert evaluate(BASE_12_1, tesla_470).ok
    quadro_470 = ToolkitFacts(cuda="11.4", driver="470.82.01", brand="Quadro")
    verdict = evaluate(BASE_12_1, quadro_470)
    assert not verdict.ok and verdict.unsatisfied == "cuda>=12.1"
    assert evaluate(BASE_12_1, ToolkitFacts(cuda="12.1", driver="530.30.02", brand="Quadro")).ok
    assert not evaluate(BASE_12_1, ToolkitFacts(cuda="11.4", driver="471.11", brand="Tesla")).ok
    assert not evaluate("cuda>=12.1", ToolkitFacts(cuda="12.0", driver="525.60.13")).ok


def test_unknown_facts_satisfy_and_versions_compare_by_number() -> None:
    assert evaluate("cuda>=12.1 brand=tesla", ToolkitFacts()).ok
    assert evaluate("cuda>=12", ToolkitFacts(cuda="12.0")).ok
    assert evaluate("cuda>=11.10", ToolkitFacts(cuda="11.8")).ok is False
    assert evaluate("driver<471", ToolkitFacts(driver="470.82.01")).ok
    with pytest.raises(ValueError):
        evaluate("cuda==12.1", ToolkitFacts(cuda="12.1"))  # the toolkit has no `==`: "invalid expression"


def test_driver_cuda_is_the_newest_cuda_the_driver_serves(kb) -> None:
    assert driver_cuda(kb, "525.60.13") == "12.0"
    assert driver_cuda(kb, "535.104.05") == "12.2"
    assert driver_cuda(kb, "470.82.01") == "11.4"


def test_modern_a100_runs_where_check_says_it_runs(kb) -> None:
    declared = _declared("modern-a100", kb)
    assert declared is not None
    host = HostSpec(gpus=["A100"], driver="525.60.13")
    errors = [f for f in check_profile(load_profile("modern-a100"), kb, host) if f.severity == "error"]
    assert not errors
    assert evaluate(declared, ToolkitFacts(cuda=driver_cuda(kb, "525.60.13"), driver="525.60.13")).ok


DRIVERS = ["418.39", "450.80.02", "470.82.01", "520.61.05", "525.60.13", "530.30.02", "535.104.05",
           "550.54.14", "570.26", "580.65.06"]


@pytest.mark.parametrize("name", [p.name for p in list_profiles()])
def test_check_and_toolkit_agree_on_every_driver(name: str, kb) -> None:
    profile = load_profile(name)
    declared = _declared(name, kb)
    if declared is None:  # a CPU image declares no requirement, and an NGC image keeps its base's own (which envgen
        # does not write): the toolkit judges envgen's nothing, and check never says it refuses
        assert not profile.is_gpu or kb.base_family(profile).release_table, name
        for driver in DRIVERS:
            codes = [f.code for f in check_profile(profile, kb, HostSpec(driver=driver))]
            assert "toolkit-refuses" not in codes, (name, driver, codes)
        return
    for driver in DRIVERS:
        host = HostSpec(driver=driver)
        errors = [f for f in check_profile(profile, kb, host) if f.severity == "error"]
        toolkit = evaluate(declared, ToolkitFacts(cuda=driver_cuda(kb, driver), driver=driver))
        refused = [f for f in errors if f.code == "toolkit-refuses"]
        assert toolkit.ok == (not refused), (name, driver, declared, [f.code for f in errors])
        if not errors:  # a driver check passes is one the toolkit starts the container on
            assert toolkit.ok, (name, driver, declared)


def test_ngc_base_keeps_its_own_requirement_unless_envgen_needs_more(kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """NGC 24.05 on an A100 with R470: the render writes no NVIDIA_REQUIRE_CUDA (the base's own stays) and check
    gives the forward-compatibility verdict alone; a torch built on a newer CUDA than 22.12's declares its own."""
    def declared(path) -> str | None:  # type: ignore[no-untyped-def]
        text = render_in_memory(plan_image(load_profile(str(path)), kb)).files["Dockerfile"].decode()
        m = re.search(r'NVIDIA_REQUIRE_CUDA="([^"]*)"', text)
        return m.group(1) if m else None

    kept = tmp_path / "kept.yaml"
    kept.write_text('name: kept\nbase: "nvcr.io/nvidia/pytorch:24.05-py3"\ngpu: {targets: [A100]}\n'
                    'packages: {pip: ["lightning==2.2.4"]}\n', encoding="utf-8")
    profile = load_profile(str(kept))
    assert declared(kept) is None
    findings = check_profile(profile, kb, HostSpec(gpus=["A100"], driver="470.82.01"))
    assert [f.code for f in findings if f.severity == "error"] == []
    assert "ngc-driver-forward-compat" in {f.code for f in findings}
    newer = tmp_path / "newer.yaml"
    newer.write_text('name: newer\nbase: "nvcr.io/nvidia/pytorch:22.12-py3"\ngpu: {targets: [A100]}\n'
                     'frameworks: {pytorch: "2.1.2+cu121"}\n', encoding="utf-8")
    assert declared(newer) == "cuda>=12.0"
    # a release without a row: the profile's CUDA describes the base, envgen adds none
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text('name: unknown\nbase: "nvcr.io/nvidia/pytorch:24.11-py3"\ngpu: {targets: [A100]}\n',
                       encoding="utf-8")
    assert declared(unknown) is None
