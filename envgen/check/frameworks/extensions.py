"""GPU extension packages (kb/data/extensions.yaml): the GPUs their kernels run on, the torch they were built
for, the CUDA major they load, the cuDNN JAX needs against the one torch pins, and PyPI's other ``apex``."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.extensions import satisfies, torch_cudnn_pin
from envgen.kb.versions import cc_tuple, vtuple
from envgen.plan.extensions import Extension, cc_min, image_cuda, torch_cuda
from envgen.plan.packages import cuda_sources


def gpu_too_old(ctx: CheckContext) -> list[Finding]:
    out = []
    for ext in ctx.plan.extensions:
        oldest, cite = cc_min(ext, ctx.kb)
        if oldest is None or not ctx.gpu:
            continue
        for target in ctx.targets:
            if target.model is None or cc_tuple(target.model.compute_capability) >= cc_tuple(oldest):
                continue
            said = f': the first call fails with "{ext.row.failure}"' if ext.row.failure else ""
            out.append(finding(
                "error", "ext-gpu-too-old",
                f"{ext.label} does not run on {target.label} (compute capability "
                f"{target.model.compute_capability}); its kernels need compute capability {oldest} or newer{said}",
                f"run it on a GPU of compute capability {oldest} or newer, or drop {ext.row.package} from "
                "packages.pip",
                cite,
            ))
    return out


def needs_torch(ctx: CheckContext) -> list[Finding]:
    out = []
    for ext in ctx.plan.extensions:
        if not ext.row.needs_torch:
            continue
        if ctx.profile.torch_version is None:
            out.append(finding(
                "error", "ext-needs-torch",
                f"{ext.label} is a PyTorch extension, and the profile installs no torch",
                "add frameworks.pytorch (a torch build for the profile's CUDA)", ext.cite()))
        elif ctx.gpu and ctx.torch_variant is not None and torch_cuda(ctx.stack) is None:
            out.append(finding(
                "error", "ext-needs-cuda-torch",
                f"{ext.label} runs CUDA kernels, and torch {ctx.profile.torch_version}+{ctx.torch_variant.tag} is "
                "a CPU-only build",
                "use a CUDA build of torch (frameworks.pytorch with a +cuXXX variant)", ext.cite()))
    return out


def cpu_only(ctx: CheckContext) -> list[Finding]:
    """A GPU package in a CPU-only profile: an sdist of CUDA kernels cannot be built, a wheel fails at first call."""
    out = []
    for ext in ctx.plan.extensions:
        gpu_only = ext.row.cc_min is not None or ext.row.cuda_major_for(ext.extras) is not None
        if ctx.gpu or not gpu_only:
            continue
        build = ext.row.build
        sdist = build is not None and build.nvcc and ext.release is not None and not ext.release.wheel
        out.append(finding(
            "error" if sdist else "warning", "ext-needs-gpu",
            f"{ext.label} runs CUDA kernels, and the profile is CPU-only (gpu.required: false)"
            + (f': PyPI has its sdist only, and building it needs CUDA ("{build.failure}")' if sdist and build else
               ": it installs, and its first GPU call fails"),
            f"drop {ext.row.package}, or make the profile a GPU one (gpu.required: true, cuda, gpu.targets)",
            ext.cite(),
        ))
    return out


def torch_mismatch(ctx: CheckContext) -> list[Finding]:
    torch = ctx.profile.torch_version
    out = []
    for ext in ctx.plan.extensions:
        spec = ext.release.torch if ext.release is not None else None
        if torch is None or satisfies(torch, spec):
            continue
        fitting = [r.versions for r in ext.row.releases if satisfies(torch, r.torch) and r.torch]
        said = f' ("{ext.row.failure}")' if ext.row.failure else ""
        out.append(finding(
            "error", "ext-torch-mismatch",
            f"{ext.label} was built for torch{spec} (its wheel's Requires-Dist), and the profile pins torch "
            f"{torch}: pip replaces torch with a build envgen did not check, or the extension fails to load{said}",
            f"pin {ext.row.package}{' '.join(fitting)} for torch {torch}" if fitting else
            f"pin torch to a release {ext.row.package} {ext.version} was built for (torch{spec})",
            ext.cite(),
        ))
    return out


def python_version(ctx: CheckContext) -> list[Finding]:
    out = []
    for ext in ctx.plan.extensions:
        spec = ext.release.python if ext.release is not None else None
        if spec is None or satisfies(ctx.profile.python_version, spec):
            continue
        fitting = [r.versions for r in ext.row.releases if r.python and satisfies(ctx.profile.python_version, r.python)]
        out.append(finding(
            "error", "ext-python",
            f"{ext.label} requires Python{spec} (Requires-Python of its files), and the profile's Python is "
            f"{ctx.profile.python_version}: pip finds no version of it that matches",
            f"pin {ext.row.package}{fitting[-1]} for Python {ctx.profile.python_version}" if fitting else
            f"use a Python{spec}",
            ext.cite(),
        ))
    return out


def cuda_build(ctx: CheckContext) -> list[Finding]:
    """A wheel with native libraries per CUDA minor (bitsandbytes) must carry the one for torch.version.cuda."""
    cuda = torch_cuda(ctx.stack)
    out = []
    for ext in ctx.plan.extensions:
        builds = ext.release.cuda_builds if ext.release is not None else []
        if not builds or cuda is None or not ctx.gpu or cuda in builds:
            continue
        fitting = [r.versions for r in ext.row.releases if cuda in r.cuda_builds]
        said = ext.row.load_failure.replace("{cuda}", cuda.replace(".", ""))
        out.append(finding(
            "error", "ext-no-cuda-build",
            f"{ext.label} carries native libraries for CUDA {', '.join(builds)}, and torch "
            f"{ctx.profile.torch_version}+{ctx.torch_variant.tag if ctx.torch_variant else ''} is built with CUDA "
            f'{cuda}: its first call fails ("{said}")',
            (f"pin {ext.row.package}{' or '.join(fitting[-3:])} (built for CUDA {cuda})" if fitting else
             f"use a torch build for one of CUDA {', '.join(builds)}")
            + (f"; {ext.row.load_override}" if ext.row.load_override else ""),
            ext.cite(),
        ))
    return out


def _cuda_majors(ctx: CheckContext, ext: Extension) -> set[int]:
    """The CUDA majors whose libraries the image has for a package that brings none of its own: torch's wheels',
    the base image's and the CUDA runtimes packages.conda/pip name (plan.packages.cuda_sources), and its own
    ``[ctk]`` extra (cupy-cudaNNx[ctk] installs the CUDA NN toolkit wheels)."""
    majors = {vtuple(source.version)[0] for source in cuda_sources(ctx.profile, ctx.kb, ctx.stack.pip_pins)}
    torch = torch_cuda(ctx.stack)
    if torch is not None:
        majors.add(vtuple(torch)[0])
    major = ext.row.cuda_major_for(ext.extras)
    if major is not None and "ctk" in ext.extras.strip("[]").split(","):
        majors.add(major)
    return majors


def cuda_major(ctx: CheckContext) -> list[Finding]:
    """cupy-cudaNNx loads CUDA NN's libraries, which the image must have; jax[cudaNN] brings its own, and beside a
    torch of another CUDA major puts a second cuDNN in the process."""
    out = []
    for ext in ctx.plan.extensions:
        major = ext.row.cuda_major_for(ext.extras)
        if major is None or not ctx.gpu:
            continue
        jax = ext.row.package == "jax"
        torch = torch_cuda(ctx.stack)
        if jax and torch is not None and vtuple(torch)[0] != major:
            out.append(finding(
                "warning", "ext-cuda-mismatch",
                f"{ext.label} is built for CUDA {major}, and torch for CUDA {torch}: JAX's own CUDA wheels come "
                "beside torch's, two cuDNN copies with one soname (libcudnn.so.9) in one process, whichever loads "
                "first serving both",
                f"use jax[cuda{vtuple(torch)[0]}]", ext.cite()))
        elif not jax and major not in _cuda_majors(ctx, ext):
            cuda = image_cuda(ctx.stack) or "none"
            out.append(finding(
                "error", "ext-cuda-mismatch",
                f"{ext.label} is built for CUDA {major}, and this image's CUDA is {cuda}: it loads CUDA {major}'s "
                f"libraries (libnvrtc.so.{major}, libcublas.so.{major}), which no package here provides",
                f"use the build for the image's CUDA (cupy-cuda{vtuple(cuda)[0] if cuda != 'none' else 'XX'}x), "
                f"or {ext.row.package}[ctk] to install CUDA {major}'s libraries with it", ext.cite()))
    return out


def _cudnn_pin(ctx: CheckContext, major: int) -> tuple[str, str, str] | None:
    """(version, who pins it, cite) of the nvidia-cudnn-cu<major> the image gets: the profile's own pin in
    packages.pip, else the one torch's wheel requires."""
    wheel = f"nvidia-cudnn-cu{major}"
    for line in ctx.plan.user_lines:
        if line.name == wheel and line.exact is not None:
            return line.exact, f"packages.pip pins {wheel}=={line.exact}", "packages.pip"
    torch, cuda = ctx.profile.torch_version, torch_cuda(ctx.stack)
    if torch is None or cuda is None or vtuple(cuda)[0] != major:
        return None
    pin = torch_cudnn_pin(ctx.kb.torch_cudnn_pins, torch, cuda)
    if pin is None:
        return None
    return pin.cudnn, f"torch {torch}+cu{cuda.replace('.', '')} pins {wheel}=={pin.cudnn}", pin.cite()


def jax_cudnn(ctx: CheckContext) -> list[Finding]:
    out = []
    for ext in ctx.plan.extensions:
        major = ext.row.cuda_major_for(ext.extras)
        spec = ext.release.cudnn.get(str(major)) if ext.release is not None and major else None
        pinned = _cudnn_pin(ctx, major) if spec and major else None
        if pinned is None or satisfies(pinned[0], spec):
            continue
        version, who, _cite = pinned
        torches = [f"torch{r.torch} for CUDA {r.cuda} (cuDNN {r.cudnn})" for r in ctx.kb.torch_cudnn_pins
                   if vtuple(r.cuda)[0] == major and satisfies(r.cudnn, spec)]
        jaxes = [f"{ext.row.package}{ext.extras}{r.versions}" for r in ext.row.releases
                 if str(major) in r.cudnn and satisfies(version, r.cudnn[str(major)])]
        out.append(finding(
            "error", "ext-cudnn-clash",
            f"{ext.label} needs nvidia-cudnn-cu{major}{spec}, and {who}: pip finds no solution, and forced "
            f'together JAX\'s first GPU call fails ("{ext.row.failure}")',
            "pick a torch whose cuDNN meets JAX's (" + ("; ".join(torches) or "none in the knowledge base")
            + f"), or a JAX release whose cuDNN floor {version} meets (" + ("; ".join(jaxes) or "none known") + ")",
            ext.cite(),
        ))
    return out


def other_project(ctx: CheckContext) -> list[Finding]:
    return [
        finding(
            "error", "ext-not-on-pypi",
            f"{ext.label}: {ext.row.pypi_other_project}",
            f"drop {ext.row.package} from packages.pip: torch.amp replaces apex.amp and torch's fused optimizers "
            "(torch.optim.AdamW(fused=True)) FusedAdam; NVIDIA Apex itself is built from its repository, outside PyPI",
            ext.cite(),
        )
        for ext in ctx.plan.extensions
        if ext.row.pypi_other_project
    ]


RULES = (gpu_too_old, needs_torch, cpu_only, torch_mismatch, python_version, cuda_build, cuda_major, jax_cudnn,
         other_project)

__all__ = ["RULES", "Extension"]
