"""kb/data/extensions.yaml against the PyPI facts it was read from (tests/fixtures/pypi/extensions.json): the
sdist-only rows, xFormers' torch pins, JAX's cuDNN floors and torch's cuDNN pins say what the files say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from envgen.kb import KnowledgeBase
from envgen.kb.extensions import satisfies, torch_cudnn_pin

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "pypi" / "extensions.json").read_text())
META = FIXTURE["wheel_metadata"]


def _requirement(rows: list[str], name: str) -> Requirement:
    return next(r for r in map(Requirement, rows) if r.name.lower() == name)


@pytest.mark.parametrize("package", ["flash-attn", "deepspeed"])
def test_sdist_only_packages_have_no_wheel_in_any_release(kb: KnowledgeBase, package: str) -> None:
    row = kb.extension(package)
    assert row is not None and row.build is not None
    for version, kinds in FIXTURE["file_kinds"][package].items():
        release = row.release(version)
        if release is not None:
            assert "wheel-linux" not in kinds and release.wheel is False, (version, kinds)


def test_xformers_torch_pins_are_the_wheels_requires_dist(kb: KnowledgeBase) -> None:
    row = kb.extension("xformers")
    assert row is not None
    for version, meta in META["xformers"].items():
        if not meta["requires_dist"]:
            continue
        release = row.release(version)
        assert release is not None, version
        wanted = _requirement(meta["requires_dist"], "torch").specifier
        assert release.torch is not None and str(wanted) == release.torch.replace(" ", ""), version


def test_jax_cudnn_floors_are_the_plugins_requires_dist(kb: KnowledgeBase) -> None:
    row = kb.extension("jax")
    assert row is not None
    for plugin, major in (("jax-cuda12-plugin", "12"), ("jax-cuda13-plugin", "13")):
        for version, meta in META[plugin].items():
            release = row.release(version)
            assert release is not None and major in release.cudnn, (plugin, version)
            floor = _requirement(meta["requires_dist"], f"nvidia-cudnn-cu{major}").specifier
            assert {s.version for s in floor} == {re.sub(r"^[<>=!]+", "", p) for p in
                                                  release.cudnn[major].split(",")}, (plugin, version)


def test_torch_cudnn_pins_are_the_wheels_requires_dist(kb: KnowledgeBase) -> None:
    for version, meta in META["torch"].items():
        pins = [r for r in map(Requirement, meta["requires_dist"]) if r.name.startswith("nvidia-cudnn-cu")]
        runtime = [r for r in map(Requirement, meta["requires_dist"]) if r.name.startswith("nvidia-cuda-runtime")]
        if not pins:
            continue
        pinned = next(iter(pins[0].specifier)).version
        majors = [r for r in kb.torch_cudnn_pins if satisfies(version, r.torch) and r.cudnn == pinned]
        assert majors, version
        if runtime:  # the wheel names its CUDA runtime: the pin row of that CUDA
            cuda = ".".join(next(iter(runtime[0].specifier)).version.split(".")[:2])
            row = torch_cudnn_pin(kb.torch_cudnn_pins, version, cuda)
            assert row is not None and row.cudnn == pinned, (version, cuda)


def test_bitsandbytes_cuda_builds_are_the_wheels_libraries(kb: KnowledgeBase) -> None:
    row = kb.extension("bitsandbytes")
    assert row is not None
    for version, files in FIXTURE["wheel_files"]["bitsandbytes"].items():
        release = row.release(version)
        assert release is not None and release.versions == f"=={version}", version
        carried = {m.group(1) for m in (re.search(r"cuda(\d+)\.so", f) for f in files["cuda_libraries"]) if m}
        assert {c.replace(".", "") for c in release.cuda_builds} == carried, version


def test_release_python_is_what_every_file_declares(kb: KnowledgeBase) -> None:
    for row in kb.extensions:
        declared = FIXTURE["requires_python"].get(row.package, {})
        for release in row.releases:
            if release.python is None:
                continue
            found = {rp for version, rps in declared.items() if satisfies(version, release.versions) for rp in rps}
            assert found == {release.python}, (row.package, release.versions, found)


def test_a_host_compiler_newer_than_nvcc_accepts_is_an_error(kb: KnowledgeBase, tmp_path: Path) -> None:
    """No nvidia/cuda tag pairs an OS with a GCC its nvcc refuses, so the rule is shown with the OS row changed."""
    import dataclasses

    from envgen.check import check_profile
    from envgen.kb.extensions import HostCompiler
    from envgen.profile import load_profile

    rows = [r for r in kb.host_compilers if r.os != "ubuntu22.04"]
    rows.append(HostCompiler(os="ubuntu22.04", gcc=13, source="a test: GCC 13 on Ubuntu 22.04"))
    changed = dataclasses.replace(kb, host_compilers=rows)
    path = tmp_path / "p.yaml"
    path.write_text('name: p\nbase: nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04\npython: "3.10"\ncuda: "11.8"\n'
                    'gpu: {targets: [A100]}\nframeworks: {pytorch: 2.1.2+cu118}\n'
                    'packages: {pip: [flash-attn==2.6.3]}\n')
    found = {f.code: f for f in check_profile(load_profile(str(path), env={}), changed)}
    assert "ext-build-host-compiler" in found
    assert "gcc versions later than 11 are not supported" in found["ext-build-host-compiler"].message
    assert "ext-build-host-compiler" not in {f.code for f in check_profile(load_profile(str(path), env={}), kb)}
