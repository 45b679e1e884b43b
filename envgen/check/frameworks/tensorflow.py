"""TensorFlow: the pip distribution, and the CUDA/cuDNN libraries the build loads (silent CPU fallback)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.versions import at_least, minor, vtuple
from envgen.plan.packages import LibSource, cuda_sources, cudnn_sources


def tf_known(ctx: CheckContext) -> list[Finding]:
    version = ctx.profile.frameworks.tensorflow
    if version and ctx.tf_build is None and ctx.ngc is None:
        return [
            finding(
                "warning",
                "tf-unknown",
                f"TensorFlow {version} is not in the knowledge base; its CUDA, "
                "cuDNN and Python needs cannot be checked",
                "use a release listed in tensorflow.yaml",
                "tensorflow.yaml",
            )
        ]
    return []


def tf_package(ctx: CheckContext) -> list[Finding]:
    build, package, version = ctx.tf_build, ctx.tf_package, ctx.profile.frameworks.tensorflow
    if build is None or package is None or version is None or ctx.ngc is not None:
        return []
    if package == "tensorflow-gpu" and build.gpu_stub:
        return [
            finding(
                "error",
                "tf-gpu-stub",
                f"tensorflow-gpu {version} is an error stub that refuses to "
                f"install (tensorflow-gpu was discontinued{_after(ctx.kb.tensorflow_gpu_last())})",
                f"install `{build.gpu_package}` instead",
                build.cite(),
            )
        ]
    if not ctx.gpu:
        return []
    if package == "tensorflow-cpu":
        return [
            finding(
                "error",
                "tf-cpu-package",
                f"the profile requires a GPU but installs tensorflow-cpu {version}, "
                "which has no CUDA support",
                f"use `{build.gpu_package}`, or set gpu.required: false",
                build.cite(),
            )
        ]
    if package not in build.gpu_capable_packages:
        return [
            finding(
                "error",
                "tf-package-no-gpu",
                f"`{package}` {version} carries no GPU support",
                f"install `{build.gpu_package}` {version}",
                build.cite(),
            )
        ]
    return []


def _after(series: str | None) -> str:
    return f" after {series}" if series else ""


def _brings_own_cuda_libs_elsewhere(ctx: CheckContext) -> bool:
    """True when TensorFlow's CUDA/cuDNN libraries must come from the image (not from NGC, not from
    `tensorflow[and-cuda]`'s own pip packages, and not irrelevant as for a CPU build)."""
    return bool(ctx.gpu) and ctx.ngc is None and ctx.tf_package not in ("tensorflow-cpu", "tensorflow[and-cuda]")


def _pip_wheel(ctx: CheckContext, family: str, cuda_major: int) -> str | None:
    """NVIDIA's PyPI wheel of a library family for a CUDA major, when one exists (kb cuda_libraries)."""
    row = ctx.kb.cuda_library(family)
    return row.pip_name(cuda_major) if row is not None else None


def _cudnn_sources(ctx: CheckContext, cuda_major: int) -> str:
    wheel = _pip_wheel(ctx, "cudnn", cuda_major)
    return f"conda cudnn or pip {wheel}" if wheel else "conda cudnn, or a cudnn base image: no pip wheel exists for it"


def tf_cuda(ctx: CheckContext) -> list[Finding]:
    build, version = ctx.tf_build, ctx.profile.frameworks.tensorflow
    if build is None or version is None or not _brings_own_cuda_libs_elsewhere(ctx):
        return []
    provided = cuda_sources(ctx.profile, ctx.kb, ctx.stack.pip_pins)
    good = [s for s in provided if ctx.kb.serves_cuda(s.version, build.cuda)]
    if not good:
        have = ", ".join(f"CUDA {s.version} ({s.origin})" for s in provided) or "no CUDA libraries"
        soname = ctx.kb.cudart_soname(build.cuda) or f"the CUDA {build.cuda} runtime"
        wheels = _pip_wheel(ctx, "cudart", vtuple(build.cuda)[0])  # NVIDIA's PyPI wheels start at CUDA 11
        fix = (
            f"give TensorFlow the CUDA {build.cuda} user-space libraries (conda cudatoolkit={build.cuda}"
            + (f" or pip {wheels.replace('cuda-runtime', '*')} packages" if wheels else "")
            + f", or a CUDA {build.cuda} base image)"
        )
        if ctx.kb.tf_package_exists("tensorflow[and-cuda]", build.series):
            fix += f", or install tensorflow[and-cuda]=={version} so pip brings them"
        elif (recipe := ctx.kb.tf_libraries(build.cuda)) is not None and recipe.pip_cudnn:
            fix += f": TensorFlow's own guide uses conda {' '.join(recipe.conda)} and pip {recipe.pip_cudnn}"
        return [
            finding(
                "error",
                "tf-cuda-mismatch",
                f"TensorFlow {version} was built for CUDA {build.cuda} / cuDNN {build.cudnn} and loads "
                f"{soname}, but the image has {have}: TF cannot load it and silently runs on the CPU (TF 2.12 "
                f'logs "Could not find cuda drivers on your machine, GPU will not be used" whatever is missing; '
                f"older releases \"Could not load dynamic library '{soname}'\")",
                fix,
                build.cite(),
            )
        ]
    if all(at_least(s.version, minor(build.cuda)) is False for s in good):
        return [
            finding(
                "warning",
                "tf-cuda-older-minor",
                f"TensorFlow {version} was built for CUDA {build.cuda}; the image has CUDA "
                f"{good[0].version}: it loads through minor-version compatibility, but PTX JIT and newer "
                "library features may fail",
                f"provide CUDA {build.cuda} libraries",
                build.cite(),
            )
        ]
    return []


def tf_cudnn(ctx: CheckContext) -> list[Finding]:
    build, version = ctx.tf_build, ctx.profile.frameworks.tensorflow
    if build is None or version is None or not _brings_own_cuda_libs_elsewhere(ctx):
        return []
    need, cuda_major = vtuple(build.cudnn), vtuple(build.cuda)[0]
    same_major = _cudnn_of_major(ctx, need[0], cuda_major)
    verdicts = [(s, at_least(s.version, build.cudnn)) for s in same_major]
    if any(ok for _, ok in verdicts):
        return []
    vague = [s for s, ok in verdicts if ok is None]
    if vague:
        s = vague[0]
        return [finding(
            "warning", "tf-cudnn-minor-unknown",
            f"TensorFlow {version} was compiled against cuDNN {build.cudnn}; the image has cuDNN {s.version} "
            f"({s.origin}), whose minor cannot be told from the tag: below {build.cudnn} convolutions fail "
            f'with "Loaded runtime CuDNN library ... but source was compiled with: {build.cudnn}"',
            f'state the cuDNN the base carries with `cudnn: "{need[0]}.<minor>"` in the profile (the image\'s '
            f"NV_CUDNN_VERSION, from `docker inspect`), or install cuDNN >= {build.cudnn} for CUDA "
            f"{cuda_major} ({_cudnn_sources(ctx, cuda_major)})",
            build.cite())]
    if same_major:
        s = same_major[0]
        return [finding(
            "error", "tf-cudnn-too-old",
            f"TensorFlow {version} was compiled against cuDNN {build.cudnn} but the image has cuDNN "
            f'{s.version} ({s.origin}): "Loaded runtime CuDNN library: {s.version} but source was '
            f'compiled with: {build.cudnn}", convolutions fail',
            f"install cuDNN >= {build.cudnn} (major {need[0]}) for CUDA {cuda_major}",
            build.cite())]
    return [finding(
        "error", "tf-cudnn-missing",
        f"TensorFlow {version} needs libcudnn.so.{need[0]} (cuDNN >= {build.cudnn}) built for CUDA "
        f"{cuda_major}.x, and the image provides none: TF falls back to the CPU",
        f"install cuDNN {build.cudnn} for CUDA {cuda_major} ({_cudnn_sources(ctx, cuda_major)})",
        build.cite())]


def _cudnn_of_major(ctx: CheckContext, cudnn_major: int, cuda_major: int) -> list[LibSource]:
    """The image's cuDNN copies of ``cudnn_major`` built for ``cuda_major`` (any, before CUDA 11)."""
    return [s for s in cudnn_sources(ctx.profile, ctx.kb, ctx.stack.pip_pins)
            if vtuple(s.version)[0] == cudnn_major
            and (s.cuda_major is None or s.cuda_major == cuda_major or cuda_major < 11)]


RULES = [tf_known, tf_package, tf_cuda, tf_cudnn]
