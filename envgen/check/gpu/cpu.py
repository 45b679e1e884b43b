"""CPU-only profiles (gpu.required: false): nothing GPU-specific that only costs size or misleads."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding

_SOURCE = "profile: gpu.required: false"


def cpu_profile(ctx: CheckContext) -> list[Finding]:
    if ctx.gpu:
        return []
    out = []
    variant = ctx.torch_variant
    if variant is not None and variant.cuda is not None:
        out.append(
            finding(
                "warning",
                "cpu-profile-cuda-build",
                f"a CPU-only profile installs the CUDA build "
                f"torch +{variant.tag}: gigabytes of unused GPU libraries",
                "use the +cpu build",
                ctx.torch_release.cite_variant(variant) if ctx.torch_release else _SOURCE,
            )
        )
    if ctx.tf_package in ("tensorflow-gpu", "tensorflow[and-cuda]"):
        out.append(
            finding(
                "warning",
                "cpu-profile-gpu-package",
                f"a CPU-only profile installs {ctx.tf_package}",
                "use tensorflow-cpu (or tensorflow)",
                ctx.tf_build.cite() if ctx.tf_build else _SOURCE,
            )
        )
    if ctx.profile.gpu.targets:
        out.append(
            finding(
                "warning",
                "cpu-profile-targets",
                "gpu.targets are set but gpu.required is false: the "
                "targets are not checked against the build",
                "remove gpu.targets or set gpu.required: true",
                _SOURCE,
            )
        )
    if ctx.host.gpus:
        out.append(
            finding(
                "info",
                "cpu-profile-host-gpu",
                "the host has a GPU but this profile is CPU-only; the image will not use it",
                "nothing to do",
                _SOURCE,
            )
        )
    return out


RULES = [cpu_profile]
