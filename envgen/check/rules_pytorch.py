"""PyTorch: the release and build variant exist, and torchvision/torchaudio belong to the torch version."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.versions import vtuple


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
        if vtuple(given) != vtuple(expected):
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
    return out


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


RULES = [torch_known, torch_variant, torch_companions, torch_cuda_differs]
