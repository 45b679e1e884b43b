"""PyTorch: the release and build variant exist, and torchvision/torchaudio belong to the torch version."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb import TorchRelease
from envgen.kb.versions import same_version, vtuple


def torch_known(ctx: CheckContext) -> list[Finding]:
    version = ctx.profile.torch_version
    if version and ctx.torch_release is None:
        return [
            finding(
                "warning",
                "torch-unknown",
                f"PyTorch {version} is not in the knowledge base; its variants, "
                "Python range and GPU architectures cannot be checked",
                "use a release listed in pytorch.yaml",
                "pytorch.yaml",
            )
        ]
    return []


def torch_variant(ctx: CheckContext) -> list[Finding]:
    release = ctx.torch_release
    if release is None or ctx.torch_variant is not None:
        return []
    tags = ", ".join(v.tag for v in release.variants)
    wanted = ctx.profile.torch_variant or f"a build for CUDA {ctx.profile.cuda}"
    return [
        finding(
            "error",
            "torch-variant-missing",
            f"torch {release.version} has no {wanted} (official builds: {tags})",
            f"pick one of: {tags}",
            release.cite(),
        )
    ]


def torch_companions(ctx: CheckContext) -> list[Finding]:
    release = ctx.torch_release
    if release is None:
        return []
    out = []
    for name, given, expected in (
        ("torchvision", ctx.profile.frameworks.torchvision, release.torchvision),
        ("torchaudio", ctx.profile.frameworks.torchaudio, release.torchaudio),
    ):
        if given is None or expected is None:
            continue
        if not same_version(given, expected):
            out.append(
                finding(
                    "error",
                    f"{name}-mismatch",
                    f"{name} {given} does not belong to torch "
                    f"{release.version} (its {name} is {expected}); pip replaces torch or fails with "
                    "undefined symbols",
                    f"use {name} {expected}",
                    release.cite(),
                )
            )
    return out + _companion_tags(ctx, release)


def companion_without_torch(ctx: CheckContext) -> list[Finding]:
    """torchvision/torchaudio set with no torch: render installs the frameworks from torch's pin and its index, so
    the companion would be dropped from the image while the probe expects it (issue 38); name the torch it needs."""
    frameworks = ctx.profile.frameworks
    if frameworks.pytorch is not None:
        return []
    out = []
    for name in ("torchvision", "torchaudio"):
        given = getattr(frameworks, name)
        if given is None:
            continue
        release = next((r for r in ctx.kb.pytorch if getattr(r, name) and same_version(getattr(r, name), given)),
                       None)
        fix = (f"add frameworks.pytorch: \"{release.version}\" ({name} {given}'s own torch)" if release is not None
               else f"add frameworks.pytorch with the torch release {name} {given} belongs to")
        out.append(finding("error", f"{name}-without-torch",
                           f"frameworks.{name} is {given} but frameworks.pytorch is not set: {name} is installed "
                           "with the torch build it belongs to, so without torch nothing installs it", fix,
                           "pytorch.yaml (each torch release with its torchvision and torchaudio)"))
    return out


def _companion_tags(ctx: CheckContext, release: TorchRelease) -> list[Finding]:
    """A torchvision/torchaudio given with a ``+tag`` must be the build of the torch variant the image gets: each
    pins its torch build, so ``torch==2.1.2+cu118`` with ``torchvision==0.16.2+cu121`` cannot be installed."""
    variant = ctx.torch_variant
    if variant is None:
        return []
    out = []
    for name, given in (
        ("torchvision", ctx.profile.frameworks.torchvision),
        ("torchaudio", ctx.profile.frameworks.torchaudio),
    ):
        if given is None or "+" not in given:
            continue
        plain, tag = given.split("+", 1)
        torch_build = f"torch {release.version}+{variant.tag}"
        if name == "torchaudio" and not release.torchaudio_variant:
            out.append(
                finding(
                    "error",
                    "torchaudio-variant-mismatch",
                    f"torchaudio {given}: torchaudio {plain} was published without local build tags "
                    "(torchaudio wheels carry a +cuXXX/+cpu tag from 0.8 on), so pip finds no such wheel",
                    f'set torchaudio: "{plain}" (no +tag)',
                    release.cite(),
                )
            )
        elif tag != variant.tag:
            out.append(
                finding(
                    "error",
                    f"{name}-variant-mismatch",
                    f"{name} {given} is the +{tag} build but the image gets {torch_build}: "
                    f"{name} +{tag} requires torch +{tag}, so pip cannot install the two together",
                    f'set {name}: "{plain}" (envgen adds +{variant.tag}) or "{plain}+{variant.tag}", or choose '
                    f"the torch +{tag} build",
                    release.cite(),
                )
            )
    return out


def torch_cpu_build(ctx: CheckContext) -> list[Finding]:
    """A GPU profile whose torch is a CPU-only build: torch.cuda.is_available() is False, the smoke test fails."""
    variant, release, cuda = ctx.torch_variant, ctx.torch_release, ctx.profile.cuda
    if variant is None or release is None or variant.cuda is not None or not ctx.gpu:
        return []
    exact = ctx.kb.torch_variant(release.version, cuda) if cuda else None
    builds = [v.tag for v in release.variants if v.cuda is not None]
    fix = (
        f'use the CUDA build: pytorch: "{release.version}+{exact.tag}"'
        if exact is not None
        else f"use a CUDA build of torch {release.version} ({', '.join(builds) or 'none known'}), "
        f'or give pytorch: "{release.version}" and envgen chooses one'
    )
    return [
        finding(
            "error",
            "torch-cpu-build",
            f"the profile requires a GPU (CUDA {cuda}) but installs torch {release.version}+{variant.tag}, "
            "a build without CUDA: torch.cuda.is_available() is False and the GPU smoke test fails",
            f"{fix}, or set gpu.required: false",
            release.cite_variant(variant),
        )
    ]


def torch_cuda_differs(ctx: CheckContext) -> list[Finding]:
    variant, cuda, release = ctx.torch_variant, ctx.profile.cuda, ctx.torch_release
    if variant is None or release is None or variant.cuda is None or cuda is None or not ctx.gpu:
        return []
    if vtuple(variant.cuda)[:2] != vtuple(cuda)[:2]:
        return [
            finding(
                "info",
                "torch-cuda-differs",
                f"torch +{variant.tag} bundles its own CUDA {variant.cuda} "
                f"runtime, not the profile's CUDA {cuda}; the host driver must support CUDA {variant.cuda}",
                "nothing to do unless the driver is older",
                release.cite_variant(variant),
            )
        ]
    return []


RULES = [torch_known, torch_variant, torch_cpu_build, torch_companions, companion_without_torch, torch_cuda_differs]
