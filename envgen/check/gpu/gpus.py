"""GPUs: known models, kernels in the PyTorch and TensorFlow builds ("no kernel image", PTX JIT), what the CUDA
toolkit can target."""

from __future__ import annotations

from collections.abc import Iterator

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding, nearest_builds
from envgen.kb.builds import kernel_coverage
from envgen.kb.versions import cc_to_sm, cc_tuple, sm_to_cc


def gpu_known(ctx: CheckContext) -> list[Finding]:
    out = []
    for t in ctx.targets:
        if t.model is not None:
            continue
        near = ctx.kb.gpu_near(t.label)
        hint = f"did you mean {near.name!r} (compute capability {near.compute_capability})? or " if near else ""
        out.append(finding(
            "warning", "gpu-unknown",
            f"GPU {t.label!r} ({t.origin}) is not in the knowledge base; its compute capability is unknown",
            f'{hint}give the compute capability instead, such as "8.6"', "gpus.yaml"))
    return out


def _lowest(arch_list: list[str]) -> tuple[int, int] | None:
    """The oldest compute capability a build's cubins serve, or None for a build without any."""
    return min((sm_to_cc(a) for a in arch_list), default=None)


def _coverage(ctx: CheckContext, arch_list: list[str], ptx: list[str]) -> Iterator[tuple[str, str, str, str, str]]:
    """For each target GPU the knowledge base knows: (compute capability, sm_XX, the build's coverage of it
    (``kb.builds.kernel_coverage``), how findings name the GPU, "too old"/"too new" when nothing covers it)."""
    lowest = _lowest(arch_list)
    for target in ctx.targets:
        gpu = target.model
        if gpu is None:
            continue
        cc, sm = gpu.compute_capability, cc_to_sm(gpu.compute_capability)
        coverage = kernel_coverage(cc, arch_list, ptx)
        age = "too old" if lowest is not None and cc_tuple(cc) < lowest else "too new"
        yield cc, sm, coverage, f"{target.label} ({sm}, compute capability {cc})", age


def torch_kernels(ctx: CheckContext) -> list[Finding]:
    variant, release = ctx.torch_variant, ctx.torch_release
    if variant is None or release is None or variant.cuda is None or not ctx.gpu:
        return []
    out = []
    build = f"torch {release.version}+{variant.tag}"
    archs = " ".join(variant.arch_list + variant.ptx)
    for cc, sm, coverage, who, age in _coverage(ctx, variant.arch_list, variant.ptx):
        if coverage == "binary":
            out.append(
                finding(
                    "info",
                    "torch-arch-binary-compat",
                    f"{build} has no {sm} cubin; {who} runs the "
                    f"cubin of an older minor of the same major ({archs})",
                    "nothing to do",
                    release.cite_variant(variant),
                )
            )
        elif coverage == "ptx":
            out.append(
                finding(
                    "warning",
                    "torch-arch-ptx-jit",
                    f"{build} has no cubin for {who}; the driver "
                    f"JIT-compiles its PTX ({', '.join(variant.ptx)}) at first use: slow start, and "
                    "kernels without PTX fail",
                    f"prefer a build with {sm}; nearest that has: "
                    f"{nearest_builds(ctx.kb, cc, release.version, variant.cuda, ctx.host.driver)}",
                    release.cite_variant(variant),
                )
            )
        elif coverage == "none":
            options = nearest_builds(ctx.kb, cc, release.version, variant.cuda, ctx.host.driver)
            out.append(
                finding(
                    "error",
                    "torch-no-kernel",
                    f"{who} is {age} for {build} (built for {archs}): "
                    '"no kernel image is available for execution on the device"',
                    f"use a torch build that includes {sm}; nearest that has: {options}",
                    release.cite_variant(variant),
                )
            )
    return out


def tf_kernels(ctx: CheckContext) -> list[Finding]:
    """TensorFlow's pip wheel on the target GPUs: PTX JIT at start-up, or no usable code (TF then ignores the GPU:
    "Ignoring visible gpu device ... The minimum required Cuda capability is ...")."""
    build, version = ctx.tf_build, ctx.profile.frameworks.tensorflow
    if build is None or version is None or not build.arch_list or ctx.ngc is not None or not ctx.gpu:
        return []
    if ctx.tf_package == "tensorflow-cpu" or "tensorflow" in ctx.profile.base_frameworks:
        return []  # no GPU code, or a TensorFlow the base image brings (not PyPI's wheel)
    codes = " ".join(build.arch_list + build.ptx)
    out = []
    lowest = _lowest(build.arch_list) or (0, 0)  # arch_list is not empty here
    for cc, sm, coverage, who, age in _coverage(ctx, build.arch_list, build.ptx):
        cite = f"{build.cite()}; {build.arch_source}"
        fails = next((r for r in ctx.kb.tensorflow_ptx_failures if cc in r.compute_capabilities), None)
        if coverage == "ptx" and fails is not None:
            out.append(finding(
                "error",
                "tf-ptx-fails",
                f"TensorFlow {version}'s wheel has no cubin for {who} (it carries {codes}) and its PTX does not run "
                f"there: GPU ops fail with {fails.error} (reported for TensorFlow {', '.join(fails.reported)} on "
                f"compute capability {cc}), they are not merely JIT-compiled",
                f"run TensorFlow on this GPU from NVIDIA's NGC TensorFlow container or a TensorFlow built for {sm}",
                f"{fails.cite()}; {cite}",
            ))
        elif coverage == "ptx":
            out.append(finding(
                "warning",
                "tf-arch-ptx-jit",
                f"TensorFlow {version}'s wheel has no cubin for {who} (it carries {codes}): TF logs \"TensorFlow "
                "was not built with CUDA kernel binaries compatible with compute capability "
                f"{cc}. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes or longer\"",
                "keep the JIT cache (~/.nv/ComputeCache, CUDA_CACHE_MAXSIZE) in a volume, or use a TensorFlow "
                f"release built for {sm}",
                cite,
            ))
        elif coverage == "none":
            out.append(finding(
                "error",
                "tf-no-kernel",
                f"{who} is {age} for TensorFlow {version} (its wheel carries "
                f"{codes}): TF ignores the GPU and runs on the CPU"
                + (f' ("The minimum required Cuda capability is {lowest[0]}.{lowest[1]}")' if age == "too old"
                   else ""),
                "use a TensorFlow release whose wheel carries code for this GPU",
                cite,
            ))
    return out


def cuda_targets(ctx: CheckContext) -> list[Finding]:
    if not ctx.gpu or ctx.profile.cuda is None:
        return []
    toolkit = ctx.kb.cuda(ctx.profile.cuda)
    if toolkit is None:
        return []
    out = []
    for target in ctx.targets:
        gpu = target.model
        if gpu is None:
            continue
        cc = cc_tuple(gpu.compute_capability)
        if cc < cc_tuple(toolkit.cc_min):
            out.append(
                finding(
                    "error",
                    "cuda-gpu-too-old",
                    f"CUDA {toolkit.version} cannot target {target.label} "
                    f"(compute capability {gpu.compute_capability}; CUDA {toolkit.version} supports "
                    f"{toolkit.cc_min}..{toolkit.cc_max})",
                    "choose an older CUDA for this GPU",
                    toolkit.cite(),
                )
            )
        # a newer minor of the newest major the toolkit targets runs its cubins (sm_86 code on sm_89): no finding
        elif cc > cc_tuple(toolkit.cc_max) and cc[0] != cc_tuple(toolkit.cc_max)[0]:
            out.append(
                finding(
                    "warning",
                    "cuda-gpu-too-new",
                    f"CUDA {toolkit.version} predates {target.label} "
                    f"(compute capability {gpu.compute_capability}, newest it targets: "
                    f"{toolkit.cc_max}); code runs only through PTX JIT where PTX was shipped",
                    "choose a CUDA release that targets this GPU",
                    toolkit.cite(),
                )
            )
    return out


RULES = [gpu_known, torch_kernels, tf_kernels, cuda_targets]
