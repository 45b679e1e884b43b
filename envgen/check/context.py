"""Everything the rules need, looked up once: the profile, the knowledge base, the host, and the
knowledge-base rows the profile points at."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from envgen.check.findings import HostSpec
from envgen.kb import BaseImageInfo, KnowledgeBase, NgcRelease, TensorflowBuild, TorchRelease, TorchVariant
from envgen.kb.models import GpuModel
from envgen.kb.versions import vtuple
from envgen.profile import Profile

if TYPE_CHECKING:
    from envgen.check.libraries import Libraries


@dataclass(frozen=True)
class Target:
    label: str  # as given: "GTX 950M", "8.0"
    origin: str  # "profile" or "host"
    model: GpuModel | None


@dataclass(frozen=True)
class CheckContext:
    profile: Profile
    kb: KnowledgeBase
    host: HostSpec
    targets: list[Target] = field(default_factory=list)
    tf_build: TensorflowBuild | None = None
    tf_package: str | None = None
    torch_release: TorchRelease | None = None
    torch_variant: TorchVariant | None = None
    torch_variant_note: str = ""
    base: BaseImageInfo | None = None
    ngc: NgcRelease | None = None

    @property
    def gpu(self) -> bool:
        return self.profile.gpu.required

    @functools.cached_property
    def libraries(self) -> Libraries:
        """The sonames the frameworks load and the distributions that provide them (``check.libraries``),
        worked out once: the library rules, the smoke expectations and the `looked at:` line all read them."""
        from envgen.check.libraries import survey  # the survey reads this context

        return survey(self)


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
        return exact, f"chose torch {version}+{exact.tag}, the build for the profile's CUDA {profile.cuda}"
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


def build_context(profile: Profile, kb: KnowledgeBase, host: HostSpec | None) -> CheckContext:
    host = host or HostSpec()
    targets = [Target(t, "profile", kb.gpu(t)) for t in profile.gpu.targets]
    targets += [Target(t, "host", kb.gpu(t)) for t in host.gpus]
    tf_version = profile.frameworks.tensorflow
    tf_build = kb.tensorflow_build(tf_version) if tf_version else None
    tf_package = None
    if tf_version:
        tf_package = profile.frameworks.tensorflow_package or kb.tensorflow_package(
            tf_version, profile.gpu.required
        )
    torch_release = kb.torch_release(profile.torch_version) if profile.torch_version else None
    variant, note = choose_torch_variant(profile, kb)
    return CheckContext(
        profile=profile,
        kb=kb,
        host=host,
        targets=targets,
        tf_build=tf_build,
        tf_package=tf_package,
        torch_release=torch_release,
        torch_variant=variant,
        torch_variant_note=note,
        base=kb.base_image(profile.base),
        ngc=kb.ngc(profile.base) if profile.is_ngc else None,
    )
