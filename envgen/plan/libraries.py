"""The image's CUDA libraries as the dynamic loader will see them, from the profile and the knowledge base.

For each framework: the sonames it loads and how it finds them (``framework_libraries`` rows).
For the image: every distribution that puts one of those sonames on disk (the base image, conda
packages, NVIDIA's pip wheels named in the profile, and the wheels a framework pulls in itself),
where it lands, whether that directory is on the search path a by-soname ``dlopen`` uses, and in
which install stage it arrives (a later stage overwrites a file an earlier one wrote).
Pure functions; ``Stack.libraries`` holds their result for one profile, and the rules in
``check.libraries.sonames``, the smoke test's expectations and the `looked at:` line read it there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from envgen import layout
from envgen.kb import BaseImageInfo, KnowledgeBase, NgcRelease, TensorflowBuild, TorchRelease, TorchVariant
from envgen.kb.libraries import CudaLibrary, nvidia_wheel, wheel_rows
from envgen.kb.versions import minor, vtuple
from envgen.plan.installers import installer_of
from envgen.plan.packages import base_cudnn, base_provides_cuda, conda_pins
from envgen.profile import Profile


class StackRows(Protocol):
    """What the survey reads of a profile's stack (``envgen.plan.stack.Stack``, which imports the survey: this
    module names the rows it reads, not the class)."""

    @property
    def profile(self) -> Profile: ...
    @property
    def kb(self) -> KnowledgeBase: ...
    @property
    def gpu(self) -> bool: ...
    @property
    def tf_build(self) -> TensorflowBuild | None: ...
    @property
    def tf_package(self) -> str | None: ...
    @property
    def torch_release(self) -> TorchRelease | None: ...
    @property
    def torch_variant(self) -> TorchVariant | None: ...
    @property
    def base(self) -> BaseImageInfo | None: ...
    @property
    def ngc(self) -> NgcRelease | None: ...
    @property
    def pip_pins(self) -> tuple[str, ...]: ...

# install stages, in the order the Dockerfile runs them
BASE, CONDA, ENVIRONMENT, EXTRAS = 0, 1, 2, 3
STAGES = ("base", "conda", "environment", "extras")  # by those numbers
STAGE_NAMES = {BASE: "the base image", CONDA: "the conda environment", ENVIRONMENT: "the environment stage",
               EXTRAS: "the extras stage (packages.pip)"}


@dataclass(frozen=True)
class Provider:
    family: str
    soname: str
    cuda_major: int | None  # the CUDA major the file was built for, when known
    version: str  # what the distribution carries: a CUDA release, a cuDNN version, a wheel version
    origin: str  # "pip nvidia-cudnn-cu11==8.7.0.84", "base image nvidia/cuda:...", "torch 2.1.2+cu121's dependencies"
    directory: str  # where the file lands
    on_search_path: bool  # reachable by a dlopen of the bare soname
    stage: int
    distribution: str | None = None  # pip distribution name, for wheels


@dataclass(frozen=True)
class Need:
    framework: str  # "tensorflow" | "torch"
    label: str  # "TensorFlow 2.12.0"
    family: str
    soname: str
    cuda_major: int
    min_version: str | None  # cudart: the CUDA it was built with; cudnn: the cuDNN it was built with
    provision: str  # search_path | wheel_deps | bundled
    distribution: str | None  # the wheel that would provide it
    carries: str  # what a providing wheel carries: the CUDA release, or the cuDNN version/major


@dataclass(frozen=True)
class Libraries:
    needs: tuple[Need, ...]
    providers: tuple[Provider, ...]


SITE = "site-packages"


def soname_for(row: CudaLibrary, cuda: str, cudnn: str | None) -> str | None:
    """The soname of ``row``'s family for a CUDA release (or a cuDNN version; NCCL's 2)."""
    if row.keyed_by == "cuda":
        return row.soname(cuda)
    if row.keyed_by == "cudnn":
        return row.soname(cudnn) if cudnn else None
    return row.soname("2")


def _families(ctx: StackRows, families: list[str]) -> list[CudaLibrary]:
    rows = [ctx.kb.cuda_library(f) for f in families]
    return [r for r in rows if r is not None]


def tensorflow_uses_image_cuda(ctx: StackRows) -> bool:
    """A GPU TensorFlow that is not NGC's (whose libraries the NGC image provides) and not a CPU build."""
    return bool(ctx.gpu and ctx.tf_build and ctx.ngc is None and ctx.tf_package != "tensorflow-cpu")


def needs(ctx: StackRows) -> list[Need]:
    """Every soname each GPU framework of the image loads, with how it finds it."""
    out: list[Need] = []
    version = ctx.profile.frameworks.tensorflow
    provided = ctx.profile.base_frameworks  # the base's own frameworks bring (and find) their own libraries
    if tensorflow_uses_image_cuda(ctx) and ctx.tf_build is not None and version and "tensorflow" not in provided:
        build = ctx.tf_build
        row = ctx.kb.framework_libraries_for("tensorflow", version, ctx.tf_package)
        if row is not None:
            cuda_major = vtuple(build.cuda)[0]
            for lib in _families(ctx, row.families):
                soname = soname_for(lib, build.cuda, build.cudnn)
                if soname is None:
                    continue
                built_with = {"cudart": build.cuda, "cudnn": build.cudnn}.get(lib.family)
                out.append(Need("tensorflow", f"TensorFlow {version}", lib.family, soname, cuda_major, built_with,
                                row.provision, lib.pip_name(cuda_major),
                                build.cudnn if lib.family == "cudnn" else build.cuda))
    variant, release = ctx.torch_variant, ctx.torch_release
    if ctx.gpu and variant is not None and release is not None and variant.cuda and "pytorch" not in provided:
        row = ctx.kb.framework_libraries_for("pytorch", release.version, None)
        if row is not None and row.provision == "wheel_deps":
            cuda_major = vtuple(variant.cuda)[0]
            cudnn = str(row.cudnn_major) if row.cudnn_major else None
            for lib in _families(ctx, row.families):
                soname = soname_for(lib, variant.cuda, cudnn)
                if soname is None:
                    continue
                out.append(Need("torch", f"torch {release.version}+{variant.tag}", lib.family, soname, cuda_major,
                                variant.cuda if lib.family == "cudart" else None, row.provision,
                                lib.pip_name(cuda_major), (cudnn or "") if lib.family == "cudnn" else variant.cuda))
    return out


def survey(ctx: StackRows) -> Libraries:
    wanted = needs(ctx)
    return Libraries(tuple(wanted), tuple(providers(ctx, wanted)))


def providers(ctx: StackRows, wanted: list[Need]) -> list[Provider]:
    """Every CUDA library file the image will hold, by distribution (``wanted``: ``needs(ctx)``)."""
    profile, kb = ctx.profile, ctx.kb
    out: list[Provider] = []
    info = ctx.base
    if info is not None and info.cuda and base_provides_cuda(profile, kb):
        base_major = vtuple(info.cuda)[0]
        for lib in kb.cuda_libraries:
            if lib.keyed_by == "cudnn":
                cudnn = base_cudnn(profile, info)
                if cudnn is None:
                    continue
                soname, version = lib.soname(cudnn), cudnn
            else:
                soname, version = soname_for(lib, info.cuda, None), minor(info.cuda)
            if soname:
                out.append(Provider(lib.family, soname, base_major, version, f"base image {profile.base}",
                                    "the base image's library directory", True, BASE))
    if installer_of(profile).conda_env:
        for name, version, spec in conda_pins(profile):
            for lib in kb.cuda_libraries:
                if name not in lib.conda:
                    continue
                soname = soname_for(lib, version, version)  # a conda pin names the CUDA or the cuDNN release
                if soname:
                    major_ = vtuple(version)[0] if lib.keyed_by == "cuda" else None
                    out.append(Provider(lib.family, soname, major_, version, f"conda {spec}",
                                        f"{layout.ENV}/lib (conda prefix)", True, CONDA))
    for spec in ctx.pip_pins:
        wheel = nvidia_wheel(spec)
        if wheel is None:
            continue
        for lib in wheel_rows(kb.cuda_libraries, wheel):
            soname = soname_for(lib, str(wheel.cuda_major), wheel.version)
            if soname:
                out.append(Provider(lib.family, soname, wheel.cuda_major, wheel.version, f"pip {spec}",
                                    f"{SITE}/{lib.site_dir(wheel.cuda_major)}", True, EXTRAS, wheel.distribution))
    out += _framework_wheel_deps(ctx, wanted)
    return out


def _framework_wheel_deps(ctx: StackRows, wanted: list[Need]) -> list[Provider]:
    """The NVIDIA wheels a framework pulls in itself (torch >= 2.0 CUDA builds, tensorflow[and-cuda]). They land
    in site-packages/nvidia/*/lib, which envgen puts on LD_LIBRARY_PATH only for wheels the profile names."""
    out: list[Provider] = []
    listed = {wheel.distribution for wheel in map(nvidia_wheel, ctx.pip_pins) if wheel}
    for need in wanted:
        if need.provision != "wheel_deps" or need.distribution is None:
            continue
        lib = ctx.kb.cuda_library(need.family)
        if lib is None:
            continue
        label = need.label if need.framework == "torch" else f"{ctx.tf_package} {ctx.profile.frameworks.tensorflow}"
        out.append(Provider(need.family, need.soname, need.cuda_major, need.carries,
                            f"{label}'s dependency {need.distribution}", f"{SITE}/{lib.site_dir(need.cuda_major)}",
                            need.distribution in listed, ENVIRONMENT, need.distribution))
    return out


def search_order(found: Iterable[Provider]) -> list[Provider]:
    """The order a by-soname dlopen meets the providers on the search path: LD_LIBRARY_PATH as rendered
    (conda prefix first, then the named NVIDIA wheels' directories), then the loader cache (base image)."""
    rank = {CONDA: 0, EXTRAS: 1, ENVIRONMENT: 1, BASE: 2}
    return sorted((p for p in found if p.on_search_path), key=lambda p: (rank[p.stage], p.directory))
