"""Base image families as KB rows (issue #28 part 3): one row per family in kb/data/base_families.yaml, read by
``kb.base_family``; the plan, the render and loading ask it instead of testing the image's name."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import envgen
from envgen.kb import KnowledgeBase, load_kb
from envgen.paths import kb_data_dir
from envgen.plan.base import python_setup_key
from envgen.plan.extensions import devel_twin, has_nvcc
from envgen.plan.parts import python_setup
from envgen.profile import Profile


def _profile(**data: Any) -> Profile:
    return Profile.model_validate({"name": "user", "installer": "pip", "python": "3.11",
                                   "gpu": {"required": False}, **data})


@pytest.mark.parametrize(("ref", "family", "nvcc", "setup"), [
    ("nvcr.io/nvidia/pytorch:24.01-py3", "ngc", True, "ngc"),
    ("nvcr.io/nvidia/tensorflow:23.12-tf2-py3@sha256:" + "a" * 64, "ngc", True, "ngc"),
    ("nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "nvidia-cuda-devel", True, "debian"),
    ("nvidia/cuda:12.1.1-runtime-ubuntu22.04", "nvidia-cuda-runtime", False, "debian"),
    ("nvidia/cuda:12.1.1-base-ubuntu22.04", "nvidia-cuda-base", False, "debian"),
    ("docker.io/library/python:3.11-slim", "python", False, "python-image"),
    ("debian:bookworm-slim", "debian", False, "debian"),
    ("ubuntu:22.04", "debian", False, "debian"),
    ("mambaorg/micromamba:1.5.8", "micromamba", False, "debian"),
    ("registry.example.com/ml/torch:2.4", "other", False, "debian"),
    # "-devel" in a name that is not nvidia/cuda's tag scheme says nothing about nvcc
    ("registry.example.com/ml/torch:2.4-devel", "other", False, "debian"),
])
def test_each_family_is_read_from_its_row(kb: KnowledgeBase, ref: str, family: str, nvcc: bool, setup: str) -> None:
    profile = _profile(base=ref)
    assert kb.base_family(ref).name == family and kb.base_family(profile).name == family
    assert has_nvcc(profile, kb) is nvcc
    assert python_setup_key(profile, kb) == setup
    assert kb.base_family(ref).cite().startswith(f"base_families.yaml#base_families.{family}: ")


def test_the_devel_twin_comes_from_the_row(kb: KnowledgeBase) -> None:
    assert devel_twin(_profile(base="nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"), kb) == \
        "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04"
    assert devel_twin(_profile(base="nvidia/cuda:12.1.1-base-ubuntu22.04"), kb) == \
        "nvidia/cuda:12.1.1-devel-ubuntu22.04"
    assert devel_twin(_profile(base="nvidia/cuda:12.1.1-devel-ubuntu22.04"), kb) is None
    assert devel_twin(_profile(base="debian:bookworm-slim"), kb) is None


def test_base_provides_and_an_envgen_image(kb: KnowledgeBase) -> None:
    """base_provides picks the family's python_provided setup; an interpreter inside /opt/env names an image envgen
    built (its environment is used as it is, no venv over it), and so do its io.envgen.* labels."""
    corp = _profile(base="registry.example.com/ml/torch:2.4", base_provides={"python": "/opt/conda/bin/python"})
    assert kb.base_family(corp).name == "base-provides" and python_setup_key(corp, kb) == "base-env"
    ngc = _profile(base="nvcr.io/nvidia/pytorch:24.01-py3", base_provides={"python": "/usr/bin/python3"})
    assert kb.base_family(ngc).name == "ngc" and python_setup_key(ngc, kb) == "base-env"
    layered = _profile(base="localhost:5000/team/base:1", local_base=True,
                       base_provides={"python": "/opt/env/bin/python3"})
    family = kb.base_family(layered)
    assert family.name == "envgen" and family.user == "non-root" and family.occupied("/opt/env") == "/opt/env"
    setup = python_setup(layered, kb)
    assert setup.key == "envgen-env" and not setup.venv
    assert kb.base_family("localhost:5000/team/base:1", labels={"io.envgen.profile"}).name == "envgen"
    assert kb.base_family("localhost:5000/team/base:1").name == "other"


def test_python_setups_moved_into_the_kb(kb: KnowledgeBase) -> None:
    """python_setups.yaml left render/data: its rows are the KB's, each with a source."""
    assert not (Path(envgen.__file__).parent / "render" / "data" / "python_setups.yaml").exists()
    assert {row.name for row in kb.python_setups} >= {"conda", "debian", "python-image", "ngc", "base-env"}
    debian = kb.python_setup("debian")
    assert debian.build_apt == ["python3", "python3-venv"] and debian.headers_apt == ["python3-dev"]
    assert all(row.source for row in (*kb.python_setups, *kb.base_families))


def test_adding_a_family_is_one_row(tmp_path: Path) -> None:
    """A new family (an in-house CUDA image with its compiler) is one row in base_families.yaml: nvcc, the python
    setup and the compilers follow without a code change."""
    data = tmp_path / "data"
    shutil.copytree(kb_data_dir(), data)
    path = data / "base_families.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["base_families"].insert(0, {
        "name": "inhouse-cuda", "match": {"repository_prefix": "registry.example.com/cuda/"},
        "package_manager": "apt", "python": "python-image", "nvcc": True, "facts": "none",
        "compiler_apt": ["clang"], "source": "test row: registry.example.com/cuda's own README"})
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    kb = load_kb(data)
    assert kb.problems() == []
    profile = _profile(base="registry.example.com/cuda/devel:12.4")
    assert kb.base_family(profile).name == "inhouse-cuda"
    assert has_nvcc(profile, kb) and python_setup_key(profile, kb) == "python-image"


def test_a_family_without_a_python_setup_is_a_kb_problem(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(kb_data_dir(), data)
    path = data / "base_families.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["base_families"][0]["python"] = "nonesuch"
    doc["base_families"].pop()  # the catch-all row
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    found = load_kb(data).problems()
    assert any("'nonesuch' is not a python_setups row" in p for p in found)
    assert any("the last row's match must be empty" in p for p in found)


_TESTS = {"startswith", "endswith", "match", "search", "fullmatch", "compile", "find", "index", "count", "split"}


def _string_tests(tree: ast.AST) -> list[int]:
    """Lines where a string holding "nvcr" is compared, searched for, or written as a regular expression."""
    def nvcr(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and "nvcr" in node.value

    def tested(node: ast.AST) -> bool:
        if isinstance(node, ast.Compare):
            return any(nvcr(n) for n in (node.left, *node.comparators))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TESTS:
            return any(nvcr(a) for a in node.args)
        return nvcr(node) and "nvcr\\.io" in str(getattr(node, "value", ""))  # a regular expression

    return [getattr(node, "lineno", 0) for node in ast.walk(tree) if tested(node)]


def test_no_nvcr_string_test_outside_the_kb() -> None:
    """NGC is a row (base_families.yaml's ngc family); no module outside envgen/kb tests an image name for
    nvcr.io (comments, docstrings and messages may name it)."""
    root = Path(envgen.__file__).parent
    wrong = [f"{path.relative_to(root)}:{line}" for path in sorted(root.rglob("*.py")) if "kb" not in
             path.relative_to(root).parts[:1] for line in _string_tests(ast.parse(path.read_text(encoding="utf-8")))]
    assert not wrong, wrong
    assert _string_tests(ast.parse('base.startswith("nvcr.io/nvidia/")')) == [1]
    assert _string_tests(ast.parse('x = {"pattern": "^nvcr\\\\.io/nvidia/"}')) == [1]


def test_planning_fills_ngc_defaults_through_the_family(kb: KnowledgeBase, tmp_path: Path) -> None:
    """The NGC defaults (cuda, python from the release row) are filled in planning for the family with a release
    table; loading, with the caller's KB or without one (base_families.yaml read alone), lets the profile leave them
    out and keeps them unset."""
    from envgen.plan.image import plan_image
    from envgen.profile import load_profile

    path = tmp_path / "ngc.yaml"
    path.write_text("name: ngc\nbase: nvcr.io/nvidia/pytorch:24.01-py3\n", encoding="utf-8")
    for given in (kb, None):
        loaded = load_profile(str(path), env={}, kb=given)
        assert loaded.cuda is None and loaded.python is None
        profile = plan_image(loaded, kb).profile
        assert profile.cuda is not None and profile.python


def test_the_kb_is_consistent() -> None:
    assert load_kb().problems() == []


def test_the_envgen_row_matches_the_label_envgen_writes(kb: KnowledgeBase) -> None:
    """The envgen family's label is the one every image envgen builds carries (envgen.vocabulary), and the paths it
    occupies are where envgen's environment goes."""
    from envgen.plan.environment import ENV_PREFIX
    from envgen.vocabulary import LABEL_PROFILE

    envgen = next(f for f in kb.base_families if f.name == "envgen")
    assert envgen.match.labels == [LABEL_PROFILE] and envgen.occupied(ENV_PREFIX) == ENV_PREFIX
