"""check/packages/combined.py and suggest/proof.py: the recorded Requires-Dist of everything pip installs,
intersected per distribution (ranges, not only exact pins), and the exact pins PyPI serves for the image's Python;
suggest refuses a candidate whose set fails either before ranking it. The resolver's own verdict on the same sets:
tests/unit/test_suggest_resolves.py."""

from __future__ import annotations

from typing import Any

import pytest

from envgen.check import check_profile
from envgen.check.packages.combined import Stated, first_disjoint, row_of, stated
from envgen.check.packages.installs import Installed
from envgen.kb import KnowledgeBase
from envgen.kb.pypackages import Requirement
from envgen.profile import Profile
from envgen.suggest.candidates import candidates
from envgen.suggest.proof import CombinedSet, installs
from envgen.suggest.recipes import Recipes, load_recipes
from envgen.suggest.search import Request, parse_frameworks


@pytest.fixture(scope="module")
def recipes() -> Recipes:
    return load_recipes()


def _profile(**fields: Any) -> Profile:
    data: dict[str, Any] = {"name": "p", "base": "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "installer": "pip",
                            "python": "3.10", "cuda": "11.8", "gpu": {"targets": ["RTX 4090"]}}
    data.update(fields)
    return Profile.model_validate(data)


def _errors(profile: Profile, kb: KnowledgeBase) -> dict[str, str]:
    return {f.code: f"{f.message} | {f.fix}" for f in check_profile(profile, kb) if f.severity == "error"}


def test_tf213_with_torch26_cu118_by_hand_is_an_error_naming_both_ranges(kb: KnowledgeBase) -> None:
    errors = _errors(_profile(frameworks={"tensorflow": "2.13.0", "pytorch": "2.6.0+cu118"}), kb)
    said = errors["pkg-range-conflict"]
    assert "typing-extensions<4.6.0,>=3.6.6 (tensorflow==2.13.0's Requires-Dist)" in said
    assert "typing-extensions>=4.10.0 (torch==2.6.0+cu118's Requires-Dist)" in said
    # the nearest recorded releases that meet the other side, each way
    assert "releases that would meet: tensorflow 2.12.0 or 2.14.0 (with torch==2.6.0+cu118)" in said
    assert "torch 2.1.2 (with tensorflow==2.13.0)" in said


def test_a_pair_whose_ranges_meet_is_quiet(kb: KnowledgeBase) -> None:
    errors = _errors(_profile(frameworks={"tensorflow": "2.14.0", "pytorch": "2.6.0+cu118"}), kb)
    assert "pkg-range-conflict" not in errors and "pkg-pin-conflict" not in errors


def test_a_torch_build_not_recorded_keeps_its_releases_requirements_without_the_builds_pins(
        kb: KnowledgeBase) -> None:
    cu118 = Installed("torch", "2.6.0", "frameworks", build="cu118")
    found = row_of(kb, cu118)
    assert found is not None and found[1] and found[0].build == "cu124"  # PyPI's wheel, partly
    names = {s.req.name for s in stated(kb, [cu118], "3.11")}
    assert "typing-extensions" in names and not any(n.startswith("nvidia-") or n == "triton" for n in names)
    own = Installed("torch", "2.6.0", "frameworks", build="cu124")
    assert any(s.req.name.startswith("nvidia-") for s in stated(kb, [own], "3.11"))


def test_three_ranges_that_meet_pairwise_but_not_together(kb: KnowledgeBase) -> None:
    row = kb.framework_requires[0]
    said = [Stated(Installed(n, "1", "frameworks"), Requirement("x", spec), row)
            for n, spec in (("a", ">=1,<3"), ("b", ">=2,<4"), ("c", "!=2.*"))]
    assert first_disjoint(said) == (0, 2)


def test_a_pin_pypi_serves_nothing_of_for_the_python(kb: KnowledgeBase) -> None:
    def profile(version: str, python: str) -> Profile:
        return _profile(base="debian:bookworm-slim", local_base=True, cuda="12.2", python=python,
                        frameworks={"tensorflow": version, "tensorflow_package": "tensorflow[and-cuda]"})

    said = _errors(profile("2.14.0", "3.11"), kb)["pkg-pin-unserved"]
    assert "tensorrt==8.5.3.1" in said and "CPython 3.6, 3.7, 3.8, 3.9, 3.10 only" in said
    assert "pkg-pin-unserved" not in _errors(profile("2.14.0", "3.10"), kb)
    assert "PyPI has no file of that release" in _errors(profile("2.15.0", "3.11"), kb)["pkg-pin-unserved"]
    assert "pkg-pin-unserved" not in _errors(profile("2.15.1", "3.11"), kb)


TRAPS = [  # what suggest wrote at d6f882d, which uv refuses (tests/corpus/users/suggested-*.yaml)
    ("RTX 4090", "550.54.14", "pytorch,tensorflow", "newest"),
    ("H100", "550.54.14", "pytorch,tensorflow", "lts"),
    ("GTX 950M", None, "pytorch,tensorflow", "newest"),
    ("RTX 3090", "525.60.13", "tensorflow", "newest"),
]


@pytest.mark.parametrize(("gpu", "driver", "frameworks", "prefer"), TRAPS)
def test_suggest_ranks_only_candidates_the_combined_set_admits(kb: KnowledgeBase, recipes: Recipes, gpu: str,
                                                               driver: str | None, frameworks: str,
                                                               prefer: Any) -> None:
    req = Request(gpu, parse_frameworks(frameworks), driver, None, prefer)
    card = kb.gpu(gpu)
    assert card is not None
    ordered, refused = candidates(kb, recipes, req, card.compute_capability)
    proof = CombinedSet(kb)
    assert ordered and all(proof.refusal(c) is None for c in ordered[:200])
    assert any("pip refuses the set" in why for why in refused)


def test_the_candidate_set_is_what_the_written_profile_installs(kb: KnowledgeBase, recipes: Recipes) -> None:
    req = Request("RTX 4090", parse_frameworks("pytorch,tensorflow"), "550.54.14")
    ordered, _ = candidates(kb, recipes, req, "8.9")
    labels = {i.label for i in installs(ordered[0])}
    assert {"torch==" + ordered[0].torch.build.label} <= labels  # type: ignore[union-attr]
    assert any(label.startswith(("tensorflow==", "tensorflow[and-cuda]==", "tensorflow-gpu==")) for label in labels)


def test_the_kb_records_requires_dist_for_every_release_suggest_can_pick(kb: KnowledgeBase,
                                                                         recipes: Recipes) -> None:
    missing = []
    for release in kb.pytorch:
        for name, version in (("torch", release.version), ("torchvision", release.torchvision),
                              ("torchaudio", release.torchaudio)):
            if version and kb.requires_of(name, version) is None:
                missing.append(f"{name}=={version}")
    for build in kb.tensorflow:
        version = recipes.tf_version(build.series)
        name = build.gpu_package.split("[")[0]
        if kb.requires_of(name, version) is None:
            missing.append(f"{name}=={version}")
    assert not missing, f"refresh with python -m tools.kbrefresh.requires: {missing}"


def test_a_pin_with_a_local_label_is_left_to_its_own_index(kb: KnowledgeBase) -> None:
    """jax[cuda12_pip] 0.4.26 pins jaxlib==0.4.26+cuda12.cudnn89, which Google's index serves (-f), never PyPI."""
    profile = _profile(base="debian:bookworm-slim", local_base=True, cuda="12.2", python="3.11",
                       packages={"pip": ["jax[cuda12_pip]==0.4.26"]}, gpu={"targets": ["A100"]})
    assert "pkg-pin-unserved" not in _errors(profile, kb)
