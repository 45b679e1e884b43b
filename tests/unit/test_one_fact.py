"""Facts stated once (issue #23): where two layers used to work out the same thing on their own, they now read
one statement of it, and these tests hold each pair to agreement. Each failed before its fix."""

from __future__ import annotations

from typing import Any

import pytest

from envgen.check.context import build_context
from envgen.kb import KnowledgeBase, load_kb
from envgen.plan.image import plan_image
from envgen.plan.libraries import EXTRAS
from envgen.profile import Profile
from envgen.render.plan import render_context


def _profile(**data: Any) -> Profile:
    return Profile.model_validate({"name": "user", "installer": "pip", **data})


def _library_path(profile: Profile, kb: KnowledgeBase) -> list[str]:
    env = dict(render_context(plan_image(profile, kb), use_lock=False).env)
    return env.get("LD_LIBRARY_PATH", "").split("${")[0].split(":")


def test_cuda13_wheel_directories_render_where_check_finds_them(kb: KnowledgeBase) -> None:
    """CUDA 13's toolkit wheels (nvidia-cublas==13.1.0.3) all land in nvidia/cu13/lib (cuda_libraries.yaml): the
    check counts them on the search path, so the rendered LD_LIBRARY_PATH must name that directory."""
    profile = _profile(base="nvidia/cuda:13.0.1-runtime-ubuntu24.04", cuda="13.0", python="3.12",
                       packages={"pip": ["nvidia-cublas==13.1.0.3", "nvidia-cudnn-cu13==9.13.0.50"]})
    rendered = _library_path(profile, kb)
    found = [p for p in build_context(profile, kb, None).libraries.providers if p.stage == EXTRAS]
    assert {p.distribution for p in found} == {"nvidia-cublas", "nvidia-cudnn-cu13"}
    for provider in found:
        assert provider.on_search_path
        assert any(path.endswith(provider.directory) for path in rendered), (provider, rendered)
    assert "/opt/env/lib/python3.12/site-packages/nvidia/cu13/lib" in rendered


def test_cuda11_wheel_directories_unchanged(kb: KnowledgeBase) -> None:
    """The -cuNN wheels keep their own directories, and a wheel the KB has no row for (nvcc) keeps the one its
    name gives."""
    profile = _profile(base="nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", cuda="11.8", python="3.10",
                       packages={"pip": ["nvidia-cudnn-cu11==8.6.0.163", "nvidia-cuda-nvcc-cu11==11.8.89"]})
    site = "/opt/env/lib/python3.10/site-packages/nvidia"
    assert _library_path(profile, kb) == [f"{site}/cuda_nvcc/lib", f"{site}/cudnn/lib"]


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(c) for c in found)) if found else found


def test_kb_cache_key_covers_every_module_that_defines_a_row() -> None:
    """The cache key hashed a hand-written list of modules without kb/libraries.py: a new field on its rows left
    the key unchanged, and a cached row raised AttributeError. Every module a cached KB's classes come from is
    in the key, whatever new table module is added."""
    import sys
    from pathlib import Path

    import envgen.kb.loader  # noqa: F401  (imports every row model)
    from envgen.kb.cache import code_files
    from envgen.kb.knowledge import KnowledgeBase
    from envgen.kb.models import Row

    defining = {Path(str(sys.modules[c.__module__].__file__)).resolve() for c in {*_subclasses(Row), KnowledgeBase}}
    assert any(p.name == "libraries.py" for p in defining)
    keyed = {p.resolve() for p in code_files()}
    assert defining <= keyed, f"left out of the cache key: {sorted(str(p) for p in defining - keyed)}"


def test_one_check_builds_one_context_and_one_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """`envgen check` built its CheckContext four times (the rules, the lock rule's resolve_stack, the scope
    line's context and its resolve_stack): now one stack and one install plan serve every reader."""
    from typer.testing import CliRunner

    import envgen.check.context as context
    import envgen.plan.image as image
    from envgen.cli import app

    calls = {"rows": 0, "plan": 0}
    rows, plan = image.resolve_rows, image.image_plan

    def counted_rows(*args: Any) -> Any:
        calls["rows"] += 1
        return rows(*args)

    def counted_plan(*args: Any) -> Any:
        calls["plan"] += 1
        return plan(*args)

    assert not hasattr(context, "resolve_rows")  # the check's context takes the plan plan_image made
    monkeypatch.setattr(image, "resolve_rows", counted_rows)
    monkeypatch.setattr(image, "image_plan", counted_plan)
    result = CliRunner().invoke(app, ["check", "a100-pypi"])
    assert "looked at:" in result.output, result.output
    assert calls == {"rows": 1, "plan": 1}


def test_building_a_profile_reads_no_knowledge_base(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The model's validation is pure: an NGC profile made in code gets no KB read; nor does load_profile (the NGC
    defaults are planning's, with the knowledge base the plan is made with), which normalises once."""
    import envgen.kb.cache as cache
    from envgen.profile import load_profile
    from envgen.profile.loader import profile_notes

    def no_read(*_: Any) -> Any:
        raise AssertionError("the knowledge base was read")

    monkeypatch.setattr(cache, "load_kb_cached", no_read)
    made = Profile.model_validate({"name": "ngc", "base": "nvcr.io/nvidia/pytorch:24.05-py3",
                                   "python": "3.10", "cuda": "12.4", "gpu": {"targets": ["A100"]}})
    assert made.cudnn is None  # the model read nothing; the release's 9.1.0.70 comes with planning
    path = tmp_path / "ngc.yaml"
    path.write_text("name: ngc\nbase: nvcr.io/nvidia/pytorch:24.05-py3\ngpu: {targets: [A100]}\n")
    loaded = load_profile(str(path))
    assert (loaded.cuda, loaded.cudnn, loaded.python) == (None, None, None)
    assert profile_notes(loaded) is not None
    plan = plan_image(loaded, load_kb())
    assert (plan.profile.cuda, plan.profile.cudnn, plan.profile.python) == ("12.4", "9.1.0.70", "3.10")
    assert any(d.startswith("cuda: '12.4'") for d in plan.defaults)


def test_the_vocabulary_is_spelled_once() -> None:
    """Label keys, the SOURCE_DATE_EPOCH default and the glibc assumed when unknown are stated in
    envgen/vocabulary.py alone (the stdlib-only probe, copied into images, keeps its own)."""
    import re
    from pathlib import Path

    import envgen
    from envgen.lock.lock_uv import uv_platform
    from envgen.lock.wheels import manylinux_platforms

    root = Path(envgen.__file__).parent
    spelled = re.compile(r"""["']io\.envgen\.[a-z0-9-]*["']|315532800""")
    wrong = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py"))
             if "probe" not in p.parts and p.name != "vocabulary.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if spelled.search(line)]
    assert not wrong, wrong
    assert manylinux_platforms(None)[0] == f"manylinux_{uv_platform(None).split('manylinux_')[1]}_x86_64"


def test_label_keys_are_spelled_in_the_vocabulary_alone() -> None:
    """No template writes an io.envgen.* key itself (the apptainer and bake exports did: they take the keys from
    envgen.vocabulary through their context now), and no string in envgen's code holds one, f-strings and partial
    keys included (docstrings and comments may name them)."""
    import ast
    from pathlib import Path

    import envgen

    root = Path(envgen.__file__).parent
    templates = root.parent / "templates"
    wrong = [f"templates/{p.relative_to(templates)}:{n}" for p in sorted(templates.rglob("*")) if p.is_file()
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "io.envgen." in line]
    for path in sorted(root.rglob("*.py")):
        if "probe" in path.parts or path.name == "vocabulary.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        wrong += [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and "io.envgen." in node.value
                  and id(node) not in prose]
    assert not wrong, wrong


def test_one_notion_of_a_gpu_profile(kb: KnowledgeBase) -> None:
    """A profile with a CUDA version but gpu.required: false got the CPU torch build from the plan and the
    NVIDIA_* variables and library path from the render (which asked `cuda is not None`): now both ask is_gpu."""
    profile = _profile(base="nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", cuda="11.8", python="3.10",
                       gpu={"required": False}, frameworks={"pytorch": "2.1.2"},
                       packages={"pip": ["nvidia-cudnn-cu11==8.6.0.163"]})
    plan = render_context(plan_image(profile, kb), use_lock=False)
    assert not profile.is_gpu and "torch==2.1.2+cpu" in plan.pins.pip
    assert not any(key.startswith("NVIDIA_") or key == "LD_LIBRARY_PATH" for key, _ in plan.env)
    assert dict(plan.labels)["io.envgen.gpu-required"] == "false"


@pytest.mark.parametrize(("ref", "name", "tag", "digest", "repository"), [
    ("ubuntu", "ubuntu", None, None, "ubuntu"),
    ("docker.io/library/python:3.11-slim", "docker.io/library/python", "3.11-slim", None, "python"),
    ("localhost:5000/envgen/x", "localhost:5000/envgen/x", None, None, "localhost:5000/envgen/x"),
    ("localhost:5000/python@sha256:ab", "localhost:5000/python", None, "sha256:ab", "localhost:5000/python"),
    ("nvidia/cuda:12.1.0-runtime-ubuntu22.04@sha256:cd", "nvidia/cuda", "12.1.0-runtime-ubuntu22.04", "sha256:cd",
     "nvidia/cuda"),
])
def test_one_image_reference_parser(ref: str, name: str, tag: str | None, digest: str | None,
                                    repository: str) -> None:
    """One parser (envgen.imageref) behind the KB's keys, the engine's tags, the render's FROM and the locks:
    ``localhost:5000/python`` was read as repository ``localhost`` by the render's own split."""
    from envgen.docker.images import split_ref
    from envgen.imageref import parse_ref
    from envgen.kb.images import parse_image

    parsed = parse_ref(ref)
    assert (parsed.name, parsed.tag, parsed.digest, parsed.repository) == (name, tag, digest, repository)
    assert parse_image(ref).repository == repository and parse_image(ref).tag == (tag or "latest")
    if digest is None:
        assert split_ref(ref) == (name, tag or "latest")


def test_cuda_sources_are_read_from_the_library_rows(kb: KnowledgeBase) -> None:
    """plan.packages had its own name patterns (nvidia-cuda-runtime-cu(\\d+), a set of conda names) and check.util
    its own cudart sonames; both read cuda_libraries.yaml's rows now, so CUDA 13's suffix-less wheel counts."""
    from envgen.plan.packages import base_provides_cuda, cuda_sources, cudnn_sources

    profile = _profile(base="ubuntu:24.04", cuda="13.0", python="3.12",
                       packages={"pip": ["nvidia-cuda-runtime==13.0.96", "nvidia-cudnn-cu13==9.13.0.50"]})
    assert [(s.version, s.cuda_major) for s in cuda_sources(profile, kb, profile.pip_pins)] == [("13.0", 13)]
    assert [(s.version, s.cuda_major) for s in cudnn_sources(profile, kb, profile.pip_pins)] == [("9.13.0.50", 13)]
    assert kb.cudart_soname("11.8") == "libcudart.so.11.0" and kb.serves_cuda("11.2", "11.8")
    assert not kb.serves_cuda("10.2", "10.1") and kb.serves_cuda("12.1", "12.4")
    flavours = {tag: base_provides_cuda(_profile(base=f"nvidia/cuda:{tag}", cuda="12.1", python="3.10"), kb)
                for tag in ("12.1.1-base-ubuntu22.04", "12.1.1-runtime-ubuntu22.04")}
    assert flavours == {"12.1.1-base-ubuntu22.04": False, "12.1.1-runtime-ubuntu22.04": True}


def test_tensorflow_library_advice_is_the_kb_row(kb: KnowledgeBase) -> None:
    """The tf-cuda-mismatch fix for TF 2.12 named TensorFlow's guide pins in the rule's text while suggest read them
    from suggest/recipes.yaml; both read kb/data/tensorflow_libraries.yaml now."""
    from envgen.check import check_profile

    profile = _profile(base="ubuntu:22.04", cuda="11.8", python="3.10", frameworks={"tensorflow": "2.12.0"})
    [mismatch] = [f for f in check_profile(profile, kb) if f.code == "tf-cuda-mismatch"]
    row = kb.tf_libraries("11.8")
    assert row is not None and row.pip_cudnn == "nvidia-cudnn-cu11==8.6.0.163"
    assert f"conda {' '.join(row.conda)} and pip {row.pip_cudnn}" in mismatch.fix


def test_tensorflow_package_thresholds_are_kb_rows(kb: KnowledgeBase) -> None:
    """kb.tensorflow_package compared with (1, 15) and (2, 14) in code; the first releases of tensorflow-cpu and
    tensorflow[and-cuda] are rows of tensorflow_packages.yaml now."""
    from dataclasses import replace

    since = {r.package: r.since for r in kb.tensorflow_packages}
    assert since == {"tensorflow-cpu": "1.15", "tensorflow[and-cuda]": "2.14"}
    assert kb.tensorflow_package("1.14.0", False) == "tensorflow"
    assert kb.tensorflow_package("2.4.0", False) == "tensorflow-cpu"
    assert kb.tensorflow_package("2.99.0", True) == "tensorflow[and-cuda]"
    assert replace(kb, tensorflow_packages=[]).tensorflow_package("2.99.0", True) == "tensorflow"


def test_every_build_arg_is_declared_from_the_vocabulary(kb: KnowledgeBase) -> None:
    """The Dockerfiles' ARG blocks are generated from envgen.vocabulary's lists, and every build arg build_args()
    can set is declared by the Dockerfile of its installer (an undeclared one is ignored by the builder; the proxy
    args are Docker's predefined ones)."""
    import re

    from envgen import vocabulary
    from envgen.profile import load_profile
    from envgen.profile.model import Mirrors
    from envgen.render.core import render_in_memory
    from envgen.render.plan import build_args

    mirrors = Mirrors(pip_index_url="https://pypi.example/simple", pip_extra_index_urls=["https://x.example/simple"],
                      pip_trusted_hosts=["pypi.example"], conda_channel_alias="https://conda.example",
                      conda_channels={"conda-forge": "https://conda.example/cf"}, apt_mirror="https://apt.example",
                      http_proxy="http://proxy:3128", https_proxy="http://proxy:3128", no_proxy="localhost")
    names = set(build_args(mirrors, offline=True, framework_index=False, base_ref="debian:bookworm-slim"))
    for profile, installer_args in (("modern-a100", vocabulary.ARGS_CONDA), ("a100-pypi", ())):
        dockerfile = render_in_memory(plan_image(load_profile(profile), kb)).files["Dockerfile"].decode()
        declared = set(re.findall(r"^ARG ([A-Z_]+)", dockerfile, re.M))
        predefined = {*vocabulary.ARGS_PROXY, *(a.lower() for a in vocabulary.ARGS_PROXY)}
        expected = names - set(vocabulary.ARGS_CONDA) - predefined | set(installer_args)
        assert expected <= declared, sorted(expected - declared)


def test_the_normalisers_framework_names_are_kb_rows(kb: KnowledgeBase, tmp_path: Any) -> None:
    """profile/normalise.py held its framework tables in code (PIP_FRAMEWORKS, UNMODELLED, CONDA_FRAMEWORKS,
    CONDA_AS_PIP); they are rows of kb/data/framework_distributions.yaml now: load_profile lifts with the tables of
    the KB it is given, and a Profile made in code reads that one file (never the whole KB)."""
    from dataclasses import replace

    from envgen.kb.distributions import read_framework_names
    from envgen.profile import load_profile

    assert kb.framework_names == read_framework_names()
    assert kb.framework_names.pip["tensorflow[and-cuda]"] == ("tensorflow", "tensorflow[and-cuda]")
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nbase: ubuntu:22.04\npython: '3.10'\ngpu: {required: false}\n"
                    "packages:\n  pip: [torch==2.1.2, six==1.16.0]\n")
    assert load_profile(str(path), kb=kb).frameworks.pytorch == "2.1.2"
    without = replace(kb, framework_pip=[r for r in kb.framework_pip if r.name != "torch"])
    kept = load_profile(str(path), kb=without)
    assert kept.frameworks.pytorch is None and kept.packages.pip == ["torch==2.1.2", "six==1.16.0"]
    made = _profile(base="ubuntu:22.04", python="3.10", gpu={"required": False}, packages={"pip": ["torch==2.1.2"]})
    assert made.frameworks.pytorch == "2.1.2"


def test_tensorflow_thresholds_in_the_rules_are_kb_rows(kb: KnowledgeBase) -> None:
    """frameworks.tensorflow compared the series with (2, 14) for tensorflow[and-cuda] and wrote "discontinued after
    2.11" for tensorflow-gpu; both come from the KB now (tensorflow_packages.yaml, tensorflow.yaml)."""
    assert kb.tensorflow_gpu_last() == "2.11"
    assert [kb.tf_package_exists("tensorflow[and-cuda]", s) for s in ("2.13", "2.14")] == [False, True]
