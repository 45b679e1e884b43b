"""What a profile installs besides the frameworks: CUDA and cuDNN user-space libraries from conda or pip,
and the CUDA/cuDNN of the base image. Pure functions over the profile and the knowledge base."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from envgen.kb import BaseImageInfo, KnowledgeBase
from envgen.kb.libraries import nvidia_wheel, wheel_rows
from envgen.kb.versions import minor
from envgen.profile import Profile


@dataclass(frozen=True)
class LibSource:
    version: str  # "11.8", "8.6.0.163"
    cuda_major: int | None  # for cuDNN: the CUDA major it was built for, when known
    origin: str  # "base image", "conda cudatoolkit=11.8.0", "pip nvidia-cudnn-cu11==8.6.0.163", ...


def conda_pins(profile: Profile) -> list[tuple[str, str, str]]:
    """(lower-case name, version, spec) of each conda pin ("[channel::]name=version[=build]")."""
    out = []
    for spec in profile.packages.conda:
        name_part = spec.split("::", 1)[-1]
        name, version = name_part.split("=")[0], name_part.split("=")[1]
        out.append((name.lower(), version, spec))
    return out


def _pip(pip_pins: Sequence[str], kb: KnowledgeBase, family: str) -> list[tuple[str, int, str]]:
    """(version, CUDA major, spec) of each NVIDIA wheel pin that carries ``family`` (the KB's pip names)."""
    out = []
    for spec in pip_pins:
        wheel = nvidia_wheel(spec)
        if wheel is not None and any(row.family == family for row in wheel_rows(kb.cuda_libraries, wheel)):
            out.append((wheel.version, wheel.cuda_major, spec))
    return out


def cuda_wheel_names(kb: KnowledgeBase) -> frozenset[str]:
    """NVIDIA's CUDA library wheels as the KB knows them, made once at plan time so that the plan's readers (the uv
    CUDA layer) need no KB: a distribution whose files ``nvidia_wheel_files.yaml`` records (nvidia-cuda-nvcc-cu11:
    ptxas, no library row), and the wheel each ``cuda_libraries.yaml`` row names for every CUDA major the toolkit
    table lists (nvidia-cuda-runtime-cu12 carries cudart; the suffix-less CUDA 13 names included). A name that merely
    starts with ``nvidia-`` is not one (nvidia-ml-py, nvidia-dali: no row)."""
    majors = {int(row.version.split(".")[0]) for row in kb.cuda_toolkits}
    names = {row.name for row in kb.nvidia_wheel_files}
    names |= {name for row in kb.cuda_libraries for major in majors if (name := row.pip_name(major))}
    return frozenset(names)


def _conda(profile: Profile, kb: KnowledgeBase, family: str) -> list[tuple[str, str]]:
    """(version, spec) of each conda pin of a package that carries ``family`` (the KB row's conda names)."""
    row = kb.cuda_library(family)
    names = set(row.conda) if row is not None else set()
    return [(version, spec) for name, version, spec in conda_pins(profile) if name in names]


def base_provides_cuda(profile: Profile, kb: KnowledgeBase) -> bool:
    """True when the base image itself carries CUDA libraries (nvidia/cuda runtime/devel, NGC): not an nvidia/cuda
    image of the "base" flavour, which holds the runtime's minimum only."""
    info = kb.base_image(profile.base)
    return info is not None and info.cuda is not None and info.flavor != "base"


def base_cudnn(profile: Profile, info: BaseImageInfo) -> str | None:
    """The cuDNN the base image holds: the profile's when it names the base's major (a patch of it), else
    the base's own."""
    if not info.cudnn:
        return None
    if profile.cudnn and profile.cudnn.split(".")[0] == info.cudnn.split(".")[0]:
        return profile.cudnn
    return info.cudnn


def cuda_sources(profile: Profile, kb: KnowledgeBase, pip_pins: Sequence[str]) -> list[LibSource]:
    """CUDA runtimes present in the image (excluding those framework wheels bundle privately); ``pip_pins``: the
    profile's exact pip pins (``Stack.pip_pins``)."""
    out: list[LibSource] = []
    info = kb.base_image(profile.base)
    if info is not None and info.cuda is not None and base_provides_cuda(profile, kb):
        out.append(LibSource(minor(info.cuda), None, f"base image {profile.base}"))
    for version, spec in _conda(profile, kb, "cudart"):
        out.append(LibSource(minor(version), None, f"conda {spec}"))
    for version, major, spec in _pip(pip_pins, kb, "cudart"):
        out.append(LibSource(minor(version), major, f"pip {spec}"))
    return out


def cudnn_sources(profile: Profile, kb: KnowledgeBase, pip_pins: Sequence[str]) -> list[LibSource]:
    out: list[LibSource] = []
    info = kb.base_image(profile.base)
    version = base_cudnn(profile, info) if info is not None and info.cuda else None
    if info is not None and info.cuda and version:
        out.append(LibSource(version, int(info.cuda.split(".")[0]), f"base image {profile.base}"))
    for version, spec in _conda(profile, kb, "cudnn"):
        out.append(LibSource(version, None, f"conda {spec}"))
    for version, major, spec in _pip(pip_pins, kb, "cudnn"):
        out.append(LibSource(version, major, f"pip {spec}"))
    return out
