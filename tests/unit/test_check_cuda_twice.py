"""cuda-twice: the same CUDA libraries from a CUDA base image and NVIDIA's wheels (or two wheels), with the megabytes
read from nvidia_wheel_files.yaml (PyPI's sizes, recorded by tools.kbrefresh.wheel_sizes)."""

from __future__ import annotations

from envgen.check import Finding, check_profile
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile
from tests.unit.test_check import variant


def twice(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.code == "cuda-twice"]


def _size(kb: KnowledgeBase, name: str, version: str) -> int:
    return max(row.size for row in kb.nvidia_wheel_files if row.name == name and row.version == version)


def test_modern_a100_cuda_base_and_cu11_wheels_warns_with_the_megabytes(kb: KnowledgeBase) -> None:
    found = twice(check_profile(load_profile("modern-a100"), kb))
    assert len(found) == 1 and found[0].severity == "warning"
    cudnn = _size(kb, "nvidia-cudnn-cu11", "8.7.0.84")
    assert cudnn > 500_000_000  # PyPI's recorded size of the file, not a typed figure
    assert f"{cudnn / 1e6:.0f} MB" in found[0].message
    assert "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04" in found[0].message and "cudnn" in found[0].message
    # the frameworks load CUDA 11 (torch cu118's own wheels, TF 2.12): the base's CUDA 12 copy is the one to leave
    assert found[0].fix.startswith("build FROM ubuntu:22.04 with the wheels")


def test_a100_pypi_plain_base_and_wheels_has_no_warning(kb: KnowledgeBase) -> None:
    assert twice(check_profile(load_profile("a100-pypi"), kb)) == []


def test_a100_pypi_on_a_cuda_11_8_base_says_drop_the_wheels(kb: KnowledgeBase) -> None:
    profile = variant("a100-pypi", base="nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", local_base=False)
    found = twice(check_profile(profile, kb))
    assert len(found) == 1
    pins = [p.split("==") for p in load_profile("a100-pypi").packages.pip if p.startswith("nvidia-")
            and "nvcc" not in p]
    total = sum(_size(kb, name, version) for name, version in pins)
    assert f"{total / 1e6:.0f} MB of wheels" in found[0].message
    assert found[0].fix.startswith("drop nvidia-cublas-cu11")
    assert "the base image's CUDA 11 libraries serve the frameworks" in found[0].fix


def test_cpu_and_ngc_profiles_have_no_warning(kb: KnowledgeBase) -> None:
    for name in ("cpu-smoke", "ngc-tensorflow", "legacy-maxwell"):
        assert twice(check_profile(load_profile(name), kb)) == [], name


def test_two_wheels_of_one_library_in_two_directories_warn_and_keep_the_loaded_major(kb: KnowledgeBase) -> None:
    """CUDA 13's runtime wheel (site-packages/nvidia/cu13/lib) beside a100-pypi's cu11 one (nvidia/cuda_runtime/lib):
    TensorFlow 2.12 loads the CUDA 11 copy; the other is dead weight. Its size is not recorded: named, not counted."""
    pins = [*load_profile("a100-pypi").packages.pip, "nvidia-cuda-runtime==13.0.96"]
    found = twice(check_profile(variant("a100-pypi", packages={"apt": [], "pip": pins}), kb))
    assert len(found) == 1 and "cudart" in found[0].message
    size = _size(kb, "nvidia-cuda-runtime-cu11", "11.8.89")
    assert f"{size / 1e6:.0f} MB of wheels" in found[0].message
    assert "not counted, no recorded size or pin: nvidia-cuda-runtime==13.0.96" in found[0].message
    assert found[0].fix == "drop nvidia-cuda-runtime: the frameworks load the CUDA 11 copies"


def test_the_plan_says_which_copy_loads_and_the_warning_repeats_it(kb: KnowledgeBase) -> None:
    """CUDA once (plan/cuda_once.py): TF 2.12 searches the loader's path (cuda_libraries.yaml provision search_path),
    where the wheels' directories (LD_LIBRARY_PATH) come before the base's loader cache: the plan's note names the
    wheels' copies as loaded and the base's as never loaded, keeps both (conservative), and cuda-twice repeats it.
    Where a framework loads its own wheels' copies (torch: wheel_deps), the plan chooses nothing."""
    from envgen.plan.image import plan_image

    profile = variant("a100-pypi", base="nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", local_base=False)
    notes = [n for n in plan_image(profile, kb).notes if n.startswith("CUDA once: ")]
    assert len(notes) == 1, notes
    assert "cudnn" in notes[0] and "nvidia-cudnn-cu11" in notes[0] and "both stay installed" in notes[0]
    assert "never those of base image nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04" in notes[0]
    found = twice(check_profile(profile, kb))
    assert len(found) == 1 and "; the plan: " in found[0].message and "both stay installed" in found[0].message
    pins = [*load_profile("a100-pypi").packages.pip, "nvidia-cuda-runtime==13.0.96"]
    two = variant("a100-pypi", packages={"apt": [], "pip": pins})
    assert [n for n in plan_image(two, kb).notes if n.startswith("CUDA once: ")] == [
        "CUDA once: cudart arrive twice; the frameworks load the copies of nvidia-cuda-runtime-cu11 (first on their "
        "search path), never those of nvidia-cuda-runtime: both stay installed (conservative; check's cuda-twice "
        "says which source to drop)"]
    assert not [n for n in plan_image(load_profile("modern-a100"), kb).notes if n.startswith("CUDA once: ")]
    assert not [n for n in plan_image(load_profile("a100-pypi"), kb).notes if n.startswith("CUDA once: ")]
