"""Source builds of GPU extension packages that PyPI has as an sdist only (kb/data/extensions.yaml): an nvcc to
build with, of the CUDA torch was built with, a host compiler that nvcc accepts, an architecture list from the
profile's GPUs; and packages that compile their kernels at run time (DeepSpeed's ops) in an image without nvcc."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.extensions import gcc_max, os_gcc
from envgen.kb.versions import minor, vtuple
from envgen.plan.extensions import Extension, has_nvcc, needs_source_build, source_build, torch_cuda


def _nvcc_cuda(ctx: CheckContext) -> str | None:
    """The CUDA of the nvcc the build gets: the base's (its devel twin has the same)."""
    return minor(ctx.base.cuda) if ctx.base is not None and ctx.base.cuda else None


def _where(ctx: CheckContext, ext: Extension) -> str:
    plan = source_build(ctx.stack, ext)
    return plan.stage_base if plan is not None and plan.stage_base else ctx.profile.base


def build_setup(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    for ext in ctx.plan.extensions:
        build = ext.row.build
        if build is None or not needs_source_build(ext) or not ctx.gpu:
            continue
        plan = source_build(ctx.stack, ext)
        sdist = f"{ext.label} has no wheel on PyPI (an sdist only)"
        if build.nvcc and not has_nvcc(ctx.profile, ctx.kb) and (plan is None or plan.stage_base is None):
            out.append(finding(
                "error", "ext-build-needs-nvcc",
                f"{sdist}: building it needs nvcc, and base {ctx.profile.base} has no CUDA toolkit and no "
                f'nvidia/cuda devel twin to build in; pip stops with "{build.failure}"',
                f"use an nvidia/cuda devel (or runtime) base of CUDA {torch_cuda(ctx.stack) or 'of torch'}: "
                "the render then builds it in the devel stage and copies the result", ext.cite()))
            continue
        out.extend(_nvcc_matches(ctx, ext, sdist) if build.nvcc else [])
        out.extend(_host_compiler(ctx, ext, sdist) if build.nvcc else [])
        if plan is not None:
            env = " ".join(f"{k}={v}" for k, v in plan.env)
            out.append(finding(
                "info", "ext-source-build",
                f"{sdist}: the render builds it in {_where(ctx, ext)} with {env}, pip --no-build-isolation "
                f"(it imports torch at build time) and {', '.join(plan.build_requires)} beside it",
                "nothing to do; name the GPUs in gpu.targets to build only their architectures", build.source))
    return out


def _nvcc_matches(ctx: CheckContext, ext: Extension, sdist: str) -> list[Finding]:
    build, nvcc, torch = ext.row.build, _nvcc_cuda(ctx), torch_cuda(ctx.stack)
    if build is None or nvcc is None:
        return []
    out = []
    if build.cuda_min and vtuple(nvcc) < vtuple(build.cuda_min):
        out.append(finding(
            "error", "ext-build-cuda-too-old",
            f"{sdist}: it builds with CUDA {build.cuda_min} or newer, and the base's nvcc is CUDA {nvcc}",
            f"use a base of CUDA {build.cuda_min} or newer", build.source))
    if torch is not None and vtuple(torch)[0] != vtuple(nvcc)[0]:
        out.append(finding(
            "error", "ext-build-nvcc-mismatch",
            f"{sdist}: the base's nvcc is CUDA {nvcc}, and torch was built with CUDA {torch}; torch's extension "
            f'builder stops: "The detected CUDA version ({nvcc}) mismatches the version that was used to '
            f'compile PyTorch ({torch}). Please make sure to use the same CUDA versions."',
            f"use a base of CUDA {torch} (nvidia/cuda:{torch}.x-...), or the torch build for CUDA {nvcc}",
            "https://github.com/pytorch/pytorch/blob/v2.9.1/torch/utils/cpp_extension.py (_check_cuda_version)"))
    elif torch is not None and vtuple(torch)[:2] != vtuple(nvcc)[:2]:
        out.append(finding(
            "warning", "ext-build-nvcc-minor",
            f"{sdist}: the base's nvcc is CUDA {nvcc}, and torch was built with CUDA {torch}: torch builds it "
            "with a warning (same major), and kernels built by the newer nvcc need its driver",
            f"prefer a base of CUDA {torch}",
            "https://github.com/pytorch/pytorch/blob/v2.9.1/torch/utils/cpp_extension.py (_check_cuda_version)"))
    return out


def _host_compiler(ctx: CheckContext, ext: Extension, sdist: str) -> list[Finding]:
    nvcc = _nvcc_cuda(ctx)
    system = ctx.base.os if ctx.base is not None else None
    limit = gcc_max(ctx.kb.host_compilers, nvcc) if nvcc else None
    gcc = os_gcc(ctx.kb.host_compilers, system) if system else None
    if limit is None or gcc is None or limit.gcc_max is None or gcc.gcc is None or gcc.gcc <= limit.gcc_max:
        return []
    return [finding(
        "error", "ext-build-host-compiler",
        f"{sdist}: {system}'s GCC is {gcc.gcc}, and CUDA {nvcc}'s nvcc accepts GCC {limit.gcc_max} at most: "
        f'"#error -- unsupported GNU version! gcc versions later than {limit.gcc_max} are not supported!"',
        f"use a base whose OS has GCC {limit.gcc_max} or older, or a newer CUDA", limit.cite())]


def runtime_nvcc(ctx: CheckContext) -> list[Finding]:
    return [
        finding(
            "warning", "ext-runtime-nvcc",
            f"{ext.label} compiles its CUDA ops when first used, and base {ctx.profile.base} has no nvcc: the first "
            f'fused op fails with "{ext.row.runtime_nvcc}"',
            "use an nvidia/cuda devel base, or keep to ops that need no compile (DeepSpeed's ds_report lists them)",
            ext.cite(),
        )
        for ext in ctx.plan.extensions
        if ext.row.runtime_nvcc and ctx.gpu and not has_nvcc(ctx.profile, ctx.kb)
    ]


def runtime_cc(ctx: CheckContext) -> list[Finding]:
    installed = {ext.label for ext in ctx.plan.installed_extensions}
    ours = ("the render installs gcc, libc6-dev and the Python headers into the image", "nothing to do")
    base = ("the base holds it (base_provides.packages), so the base's own C compiler serves it: envgen installs none",
            "nothing to do: the GPU tier's smoke test runs a kernel of it")
    return [
        finding(
            "info", "ext-runtime-cc",
            f"{ext.label} compiles native code with a C compiler when it first runs a kernel (without one: "
            f'"{ext.row.runtime_cc}"): ' + (ours if ext.label in installed else base)[0],
            (ours if ext.label in installed else base)[1], ext.cite(),
        )
        for ext in ctx.plan.extensions
        if ext.row.runtime_cc and ctx.gpu
    ]


RULES = (build_setup, runtime_nvcc, runtime_cc)
