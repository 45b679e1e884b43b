"""Knowledge-base breadth: unverified rows never give an error by themselves; NGC family rules apply with or
without a release row, and forward compatibility is for data-centre GPUs only; nvidia/cuda tags the tag scheme
proves absent are errors, tags of a CUDA without a row are warnings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase, load_kb
from envgen.paths import kb_data_dir
from envgen.profile import load_profile
from envgen.profile.model import Profile


def profile(**fields: object) -> Profile:
    data: dict[str, object] = {"name": "t", "base": "ubuntu:22.04", "installer": "pip", "python": "3.10"}
    data.update(fields)
    return Profile.model_validate(data)


def codes(findings: list, severity: str) -> set[str]:  # type: ignore[type-arg]
    return {f.code for f in findings if f.severity == severity}


def test_every_unverified_mark_is_a_known_row(kb: KnowledgeBase) -> None:
    cites = kb.unverified_cites
    assert any(c.startswith("cudnn.yaml#9.13.0") for c in cites)
    assert not any(c.startswith("ngc.yaml#") for c in cites), "every NGC row rests on NVIDIA's pages (issue 29)"


def test_an_error_on_an_unverified_row_is_a_warning(tmp_path: Path) -> None:
    """ngc.yaml's 23.12 row (driver minimum 545) marked unverified in a copy: a driver below it is a warning that says
    so."""
    data = tmp_path / "data"
    shutil.copytree(kb_data_dir(), data)
    ngc = data / "ngc.yaml"
    row = "- {image: nvcr.io/nvidia/tensorflow, tag: 23.12-tf2-py3,"
    assert row in ngc.read_text()
    ngc.write_text(ngc.read_text().replace(row, "- {unverified: true, " + row.removeprefix("- {")))
    findings = check_profile(load_profile("ngc-tensorflow"), load_kb(data), HostSpec(gpus=["A100"], driver="525.60.13"))
    too_old = [f for f in findings if f.code == "ngc-driver-too-old"]
    assert too_old and too_old[0].severity == "warning" and "unverified" in too_old[0].message


def test_the_same_fact_verified_is_an_error(kb: KnowledgeBase) -> None:
    findings = check_profile(load_profile("ngc-tensorflow"), kb, HostSpec(gpus=["A100"], driver="525.60.13"))
    assert "ngc-driver-too-old" in codes(findings, "error")


def test_ngc_family_rules_apply_without_a_release_row(kb: KnowledgeBase) -> None:
    p = profile(base="nvcr.io/nvidia/pytorch:24.11-py3", cuda="12.6", frameworks={"pytorch": "2.5.0"})
    findings = check_profile(p, kb, HostSpec(gpus=["GTX 950M"]))
    assert "ngc-unknown" in codes(findings, "warning")
    assert "ngc-gpu-too-old" in codes(findings, "error")  # Maxwell: the family needs 6.0
    assert "ngc-gpu-too-old" not in codes(check_profile(p, kb, HostSpec(gpus=["GTX 1080"])), "error")


def test_forward_compatibility_is_for_data_centre_gpus_only(kb: KnowledgeBase) -> None:
    p = load_profile("ngc-tensorflow")
    a100 = check_profile(p, kb, HostSpec(gpus=["A100"], driver="535.104.05"))
    assert "ngc-driver-forward-compat" in codes(a100, "warning")
    rtx = check_profile(p.model_copy(update={"gpu": p.gpu.model_copy(update={"targets": []})}), kb,
                        HostSpec(gpus=["RTX 3090"], driver="535.104.05"))
    assert "ngc-driver-no-forward-compat" in codes(rtx, "error")


def test_nvidia_cuda_tag_the_scheme_proves_absent_is_an_error_when_the_row_is_verified(tmp_path: Path) -> None:
    """The shipped rows are read from NVIDIA's tag lists (not unverified): a tag they lack is an error; the same
    finding from a row marked unverified is a warning."""
    bad_os = profile(base="nvidia/cuda:12.1.1-runtime-ubuntu24.04", cuda="12.1")
    assert "base-tag-not-published" in codes(check_profile(bad_os, load_kb()), "error")
    bad_cudnn = profile(base="nvidia/cuda:12.1.1-cudnn9-runtime-ubuntu22.04", cuda="12.1")
    assert "base-tag-not-published" in codes(check_profile(bad_cudnn, load_kb()), "error")
    data = tmp_path / "data"
    shutil.copytree(kb_data_dir(), data)
    images = data / "base_images.yaml"
    images.write_text(images.read_text().replace('  - cuda: "12.1"\n', '  - cuda: "12.1"\n    unverified: true\n'))
    assert "base-tag-not-published" in codes(check_profile(bad_os, load_kb(data)), "warning")


def test_nvidia_cuda_tag_without_a_row_is_a_warning(kb: KnowledgeBase) -> None:
    p = profile(base="nvidia/cuda:12.7.0-runtime-ubuntu22.04", cuda="12.6")
    found = check_profile(p, kb)
    assert "base-tag-unknown" in codes(found, "warning")
    assert "base-tag-not-published" not in codes(found, "error")


@pytest.mark.parametrize(("torch", "python", "severity"), [
    ("2.3.1", "3.12", "warning"),  # "3.12 experimental" in upstream's release matrix
    ("2.3.1", "3.11", None),
    ("2.5.1", "3.13", "warning"),
    ("2.4.1", "3.13", "error"),  # no 3.13 wheels at all
    ("2.9.0", "3.14", None),
])
def test_pytorch_python_windows_with_experimental_pythons(
    kb: KnowledgeBase, torch: str, python: str, severity: str | None
) -> None:
    p = profile(installer="conda", channels=["conda-forge"], python=python, frameworks={"pytorch": torch},
                gpu={"required": False})
    found = check_profile(p, kb)
    python_findings = [f for f in found if f.code in ("python-experimental", "python-no-wheels")]
    if severity is None:
        assert not python_findings
    else:
        assert python_findings and python_findings[0].severity == severity


def test_newest_releases_have_their_cuda_13_and_sm_120_builds(kb: KnowledgeBase) -> None:
    for version in ("2.9.0", "2.10.0", "2.11.0", "2.12.0", "2.13.0"):
        cu130 = kb.torch_variant_by_tag(version, "cu130")
        assert cu130 is not None and "sm_120" in cu130.arch_list and "sm_50" not in cu130.arch_list
    assert "sm_120" in kb.torch_variant_by_tag("2.8.0", "cu129").arch_list  # type: ignore[union-attr]
    assert kb.torch_variant_by_tag("2.9.0", "cu130").unverified  # type: ignore[union-attr]
    assert not kb.torch_variant_by_tag("2.12.0", "cu130").unverified  # type: ignore[union-attr]


@pytest.mark.parametrize(("cudnn", "cuda", "severity"), [
    ("9.17.0", "11.8", "error"),  # support matrix: no CUDA 11 package of 9.17
    ("9.17.0", "12.8", None),
    ("9.13.0", "11.8", "warning"),  # the same claim from an unverified row
    ("8.9.5", "12.3", "error"),  # 8.9.5 was built for 12.0-12.2
    ("7.6.0", "10.2", "error"),
    ("7.6.0", "10.1", None),
])
def test_cudnn_cuda_pairs_never_released(kb: KnowledgeBase, cudnn: str, cuda: str, severity: str | None) -> None:
    p = profile(installer="conda", channels=["conda-forge"], cuda=cuda, cudnn=cudnn)
    found = [f for f in check_profile(p, kb) if f.code == "cudnn-cuda-mismatch"]
    assert [f.severity for f in found] == ([severity] if severity else [])
