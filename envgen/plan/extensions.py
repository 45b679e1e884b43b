"""The GPU extension packages a profile installs (kb/data/extensions.yaml) and what the install plan makes of
them: which CUDA the image's framework was built for, and how a package PyPI has as an sdist only is built (the
stage it runs in, its architecture list from the profile's GPUs). Pure functions over the profile's stack; the
check's rules judge them, the render writes the build stages."""

from __future__ import annotations

from dataclasses import dataclass

from envgen.kb import KnowledgeBase
from envgen.kb.extensions import ExtensionPackage, ExtensionRelease
from envgen.kb.versions import cc_tuple, minor
from envgen.plan.stack import Stack
from envgen.profile import Profile
from envgen.profile.requirements import PipLine


@dataclass(frozen=True)
class Extension:
    row: ExtensionPackage
    spec: str  # as the profile writes it: "jax[cuda12]==0.12.0.1"
    extras: str  # "[cuda12]" or ""
    version: str
    release: ExtensionRelease | None

    @property
    def label(self) -> str:
        return f"{self.row.package}{self.extras}=={self.version}"

    def cite(self) -> str:
        return self.row.cite_release(self.release) if self.release is not None else self.row.cite()


def extension_of(line: PipLine, kb: KnowledgeBase) -> Extension | None:
    """The extensions.yaml row of an exact ``packages.pip`` pin, None for any other line (the plan asks once per
    line: ``ImagePlan.extensions``)."""
    version = line.exact
    row = kb.extension(line.name) if version is not None else None
    if row is None or version is None:
        return None
    return Extension(row, line.text, line.extras_text, version, row.release(version))


def torch_cuda(stack: Stack) -> str | None:
    """The CUDA "major.minor" the image's torch was built for (torch.version.cuda), None without a CUDA torch."""
    variant = stack.torch_variant
    return minor(variant.cuda) if variant is not None and variant.cuda else None


def image_cuda(stack: Stack) -> str | None:
    """The CUDA the image's libraries are for: torch's build, else the profile's, else the base image's."""
    cuda = torch_cuda(stack) or stack.profile.cuda or (stack.base.cuda if stack.base is not None else None)
    return minor(cuda) if cuda else None


def has_nvcc(profile: Profile, kb: KnowledgeBase) -> bool:
    """The base carries nvcc (its family's row: an nvidia/cuda ``devel`` tag, an NGC framework image)."""
    return kb.base_family(profile).nvcc


def devel_twin(profile: Profile, kb: KnowledgeBase) -> str | None:
    """The nvidia/cuda ``devel`` tag of the same CUDA, cuDNN and OS as a ``runtime``/``base`` base (its family's
    ``devel_twin``): the stage a source build runs in (nvcc, headers), its result copied into the runtime image.
    None when there is none, or the KB does not know the tag as available."""
    twin = kb.base_family(profile).twin_of(profile.base)
    info = kb.base_image(twin) if twin is not None else None
    return twin if info is not None and info.status == "available" else None


def arch_list(ccs: list[str], fmt: str, supported: list[str]) -> list[str]:
    """The architectures a source build compiles for GPUs of these compute capabilities: "8.0", "9.0" (dotted,
    TORCH_CUDA_ARCH_LIST) or "80", "90" (digits, FLASH_ATTN_CUDA_ARCHS); each GPU gets the newest ``supported``
    value of its major at or below it; sorted, once each."""
    chosen = set()
    for cc in ccs:
        fits = [s for s in supported if cc_tuple(s)[0] == cc_tuple(cc)[0] and cc_tuple(s) <= cc_tuple(cc)]
        if not supported:
            chosen.add(cc)
        elif fits:
            chosen.add(max(fits, key=cc_tuple))
    return [cc.replace(".", "") if fmt == "digits" else cc for cc in sorted(chosen, key=cc_tuple)]


def target_ccs(stack: Stack) -> list[str]:
    """The compute capabilities of the profile's GPUs (gpu.targets); without any, those torch has kernels for."""
    ccs = [t.model.compute_capability for t in stack.targets if t.model is not None]
    if not ccs and stack.torch_variant is not None:
        ccs = [f"{a[3:-1]}.{a[-1]}" for a in stack.torch_variant.arch_list if a.startswith("sm_")]
    return ccs


def cc_min(ext: Extension, kb: KnowledgeBase) -> tuple[str | None, str]:
    """The oldest GPU the package runs on and the row that says so: its own, else its CUDA major's
    (cupy-cuda13x and jax[cuda13] run where CUDA 13 does)."""
    if ext.row.cc_min:
        return ext.row.cc_min, ext.cite()
    major = ext.row.cuda_major_for(ext.extras)
    toolkit = kb.cuda(f"{major}.0") if major is not None else None
    if toolkit is not None:
        return toolkit.cc_min, toolkit.cite()
    return None, ""


@dataclass(frozen=True)
class SourceBuild:
    """How the render builds one sdist-only package: in which stage, with which variables and flags."""

    spec: str
    stage_base: str | None  # the devel twin the build runs in; None: the environment's own base
    env: tuple[tuple[str, str], ...]  # arch list, MAX_JOBS, the package's fixed variables
    build_requires: tuple[str, ...]  # installed beside it for --no-build-isolation


def needs_source_build(ext: Extension) -> bool:
    return ext.row.build is not None and ext.release is not None and not ext.release.wheel


def source_build(stack: Stack, ext: Extension) -> SourceBuild | None:
    """The build of ``ext`` from its sdist, or None when PyPI has a wheel for it (or the KB has no recipe). GPU
    profiles only: a CPU-only image installs what pip finds, and the check says why that fails."""
    build = ext.row.build
    if not stack.gpu or build is None or not needs_source_build(ext):
        return None
    env: list[tuple[str, str]] = []
    ccs = target_ccs(stack)
    archs = arch_list(ccs, build.arch_format, build.archs)
    if archs:
        env.append((build.arch_env, ";".join(archs)))
    if build.arch_env != "TORCH_CUDA_ARCH_LIST" and ccs:  # torch.utils.cpp_extension reads it too
        env.append(("TORCH_CUDA_ARCH_LIST", ";".join(arch_list(ccs, "dotted", []))))
    env.append(("MAX_JOBS", str(build.max_jobs)))
    env.extend(sorted(build.env.items()))
    twin = None if has_nvcc(stack.profile, stack.kb) or not build.nvcc else devel_twin(stack.profile, stack.kb)
    return SourceBuild(ext.spec, twin, tuple(env), tuple(build.build_requires))

