"""The knowledge-base rows a profile points at, looked up once: the TensorFlow build and distribution, the torch
release and the build (variant) the image gets, the base image's row, the NGC release, the GPUs the profile
names. The install plan (``plan.install``), the library survey (``plan.libraries``) and every check rule read
them here."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from envgen.kb import BaseImageInfo, KnowledgeBase, NgcRelease, TensorflowBuild, TorchRelease, TorchVariant
from envgen.kb.families import BaseFamily
from envgen.kb.models import GpuModel
from envgen.kb.versions import minor, vtuple
from envgen.plan.defaults import planned_profile
from envgen.plan.libraries import Libraries, survey
from envgen.plan.packages import cuda_sources
from envgen.plan.wheel_needs import WheelSurvey, wheel_libraries
from envgen.profile import Profile
from envgen.profile.requirements import PipLine


@dataclass(frozen=True)
class Target:
    label: str  # as given: "GTX 950M", "8.0"
    origin: str  # "profile" or "host"
    model: GpuModel | None


@dataclass(frozen=True)
class Stack:
    profile: Profile
    kb: KnowledgeBase
    family: BaseFamily  # the base image's family (base_families.yaml)
    targets: list[Target] = field(default_factory=list)  # the GPUs the profile names
    tf_build: TensorflowBuild | None = None
    tf_package: str | None = None
    torch_release: TorchRelease | None = None
    torch_variant: TorchVariant | None = None
    torch_variant_note: str = ""
    base: BaseImageInfo | None = None
    ngc: NgcRelease | None = None
    # the values the profile left to the KB, filled in ``profile`` (plan.defaults): "cuda: '12.1' (why)"
    defaults: tuple[str, ...] = ()

    @property
    def gpu(self) -> bool:
        return self.profile.is_gpu

    @functools.cached_property
    def pip_lines(self) -> tuple[PipLine, ...]:
        """``packages.pip`` read once (name, extras, specifier, marker), in profile order."""
        return tuple(self.profile.pip_lines)

    @functools.cached_property
    def pip_pins(self) -> tuple[str, ...]:
        """The exact ``packages.pip`` pins the image gets, without their markers: "nvidia-cudnn-cu12==9.1.0.70"."""
        python = self.profile.python_version
        return tuple(line.requirement for line in self.pip_lines if line.applies(python) and not line.floats)

    @functools.cached_property
    def cuda_in_use(self) -> list[tuple[str, str]]:
        """(CUDA minor, why) for every CUDA runtime the image's code will call, worked out once: the driver rules
        and NVIDIA_REQUIRE_CUDA (``plan.require``) read it."""
        return cuda_in_use(self)

    @functools.cached_property
    def libraries(self) -> Libraries:
        """The sonames the frameworks load and the distributions that provide them (``plan.libraries``),
        worked out once: the library rules, the smoke expectations and the `looked at:` line all read them."""
        return survey(self)

    @functools.cached_property
    def wheel_libraries(self) -> WheelSurvey:
        """The CUDA libraries the recorded wheels of ``packages.pip`` load, each with who provides it
        (``plan.wheel_needs``): check's wheel-lib-missing and the probe's library tier read them."""
        return wheel_libraries(self.kb, self.pip_lines, self.profile.python_version, self.libraries.providers)


def choose_torch_variant(profile: Profile, kb: KnowledgeBase) -> tuple[TorchVariant | None, str]:
    """The torch build the image gets, and a sentence when envgen chose it rather than the profile."""
    version = profile.torch_version
    if version is None:
        return None, ""
    release = kb.torch_release(version)
    if release is None:
        return None, ""
    if profile.torch_variant:
        return kb.torch_variant_by_tag(version, profile.torch_variant), ""
    if not profile.gpu.required or profile.cuda is None:
        return kb.torch_variant(version, None), f"chose the CPU build of torch {version} (no GPU required)"
    exact = kb.torch_variant(version, profile.cuda)
    if exact is not None:
        where = f" (PyPI's torch {version} wheel is that build)" if exact.pypi else ""
        return exact, f"chose torch {version}+{exact.tag}, the build for the profile's CUDA {profile.cuda}{where}"
    same_major = [
        v
        for v in release.variants
        if v.cuda
        and v.cuda.split(".")[0] == profile.cuda.split(".")[0]
        and vtuple(v.cuda)[:2] <= vtuple(profile.cuda)[:2]
    ]
    if same_major:
        best = max(same_major, key=lambda v: vtuple(v.cuda or "0"))
        return best, (
            f"chose torch {version}+{best.tag}: no build for CUDA {profile.cuda}; the newest build of the "
            f"same CUDA major (wheels bundle their CUDA runtime)"
        )
    return None, f"torch {version} has no build for CUDA {profile.cuda} or an older CUDA of the same major"


def resolve_rows(profile: Profile, kb: KnowledgeBase) -> Stack:
    """The rows ``profile`` points at; the stack's profile is ``profile`` with the values it leaves to the KB
    filled in (``plan.defaults``: an NGC release's CUDA, cuDNN and Python, the CUDA of the frameworks' wheels)."""
    family = kb.base_family(profile)
    profile, defaults = planned_profile(profile, kb, family)
    tf_version = profile.frameworks.tensorflow
    tf_package = None
    if tf_version:
        tf_package = profile.frameworks.tensorflow_package or kb.tensorflow_package(tf_version, profile.gpu.required)
    variant, note = choose_torch_variant(profile, kb)
    return Stack(
        profile=profile,
        kb=kb,
        family=family,
        targets=[Target(t, "profile", kb.gpu(t)) for t in profile.gpu.targets],
        tf_build=kb.tensorflow_build(tf_version) if tf_version else None,
        tf_package=tf_package,
        torch_release=kb.torch_release(profile.torch_version) if profile.torch_version else None,
        torch_variant=variant,
        torch_variant_note=note,
        base=kb.base_image(profile.base),
        ngc=kb.ngc(profile.base) if family.release_table else None,
        defaults=defaults,
    )


def cuda_in_use(stack: Stack) -> list[tuple[str, str]]:
    """(CUDA minor, why) for every CUDA runtime the image's code will call."""
    used: list[tuple[str, str]] = []
    if stack.profile.cuda and stack.ngc is None:
        used.append((minor(stack.profile.cuda), "the profile's CUDA"))
    if stack.torch_variant is not None and stack.torch_variant.cuda:
        used.append((minor(stack.torch_variant.cuda), f"torch +{stack.torch_variant.tag}"))
    if stack.tf_build is not None and stack.ngc is None and stack.tf_package != "tensorflow-cpu":
        if stack.tf_package == "tensorflow[and-cuda]":
            used.append((stack.tf_build.cuda, f"tensorflow[and-cuda] {stack.tf_build.series}"))
        for source in cuda_sources(stack.profile, stack.kb, stack.pip_pins):
            used.append((source.version, source.origin))
    seen: dict[str, str] = {}
    for version, why in used:
        seen.setdefault(version, why)
    return sorted(seen.items(), key=lambda item: vtuple(item[0]))
