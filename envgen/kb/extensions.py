"""Rows of ``extensions.yaml``: the GPU packages that sit on a framework's CUDA build (flash-attn, xformers,
bitsandbytes, CuPy, Apex, DeepSpeed, Triton, JAX) and break in their own ways; the host compilers each
CUDA release's nvcc accepts; the cuDNN each torch wheel pins (what JAX's cuDNN needs meet)."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, ClassVar, Literal

from envgen.kb.models import CC, Row, Source, Ver
from envgen.records import Check, Record


def _specifier(value: str | None) -> str | None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # lazy: `envgen check` loads a pickled KB

    if value is not None:
        try:
            SpecifierSet(value)
        except InvalidSpecifier as exc:
            raise ValueError(f"{value!r} is not a version specifier such as '>=2.4,<3'") from exc
    return value


def _specifiers(value: dict[str, str]) -> dict[str, str]:
    for spec in value.values():
        _specifier(spec)
    return value


VersionSpec = Annotated[str, Check(_specifier)]


def satisfies(version: str, specifier: str | None) -> bool:
    """``version`` (a local tag such as ``+cu128`` dropped) inside ``specifier``; True without one."""
    if not specifier:
        return True
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version.split("+")[0]) in SpecifierSet(specifier, prereleases=True)
    except InvalidVersion:
        return False


class SourceBuild(Record):
    """What building the package from its sdist needs (PyPI has no wheel, or none for this stack)."""

    arch_env: str  # the variable that picks the GPU architectures: TORCH_CUDA_ARCH_LIST, FLASH_ATTN_CUDA_ARCHS
    arch_format: Literal["dotted", "digits"]  # "8.0;9.0" or "80;90"
    # the only values the build understands (compute capabilities); a GPU gets the newest of its major at or
    # below it (8.6 -> 8.0: sm_80 code runs on 8.6); empty: any
    archs: list[CC] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # fixed build variables (FLASH_ATTENTION_FORCE_BUILD=TRUE)
    build_requires: list[str] = field(default_factory=list)  # what setup.py imports besides torch (no build isolation)
    max_jobs: int = 4  # nvcc jobs: each takes several GB of memory
    nvcc: bool = True  # the build compiles CUDA code (False: a pure-Python sdist that imports torch, DeepSpeed)
    cuda_min: Ver | None = None  # the oldest nvcc it builds with
    failure: str = ""  # what the build prints when nvcc is missing
    source: Source


class ExtensionRelease(Record):
    """One version range of a package: what its wheels were built against and what it needs."""

    versions: VersionSpec  # specifier on the package's own version: ">=2.8,<2.9", "==0.0.32.post2"
    torch: VersionSpec | None = None  # specifier on torch (Requires-Dist, or the build it was made for)
    python: VersionSpec | None = None  # the Requires-Python every file of these releases declares
    # CUDA major -> specifier on the nvidia-cudnn wheel it requires
    cudnn: Annotated[dict[str, str], Check(_specifiers)] = field(default_factory=dict)
    wheel: bool  # PyPI has a Linux x86_64 wheel (else an sdist only: a source build)
    # the CUDA "major.minor" releases its wheel carries native libraries for, picked by torch.version.cuda
    # (bitsandbytes: libbitsandbytes_cuda128.so); empty: not per CUDA minor
    cuda_builds: list[Ver] = field(default_factory=list)
    source: Source
    unverified: bool = False


class ExtensionPackage(Row):
    FILE: ClassVar[str] = "extensions.yaml"

    package: str  # canonical pip name: flash-attn, cupy-cuda12x, jax
    extras: dict[str, int] = field(default_factory=dict)  # extra -> the CUDA major it installs (jax[cuda12] -> 12)
    cuda_major: int | None = None  # the CUDA major the distribution itself is built for (cupy-cuda12x)
    module: str  # import name
    needs_torch: bool = False
    cc_min: CC | None = None  # oldest GPU its kernels run on
    failure: str = ""  # its exact words at the first call on an older GPU
    pypi_other_project: str = ""  # PyPI's distribution of that name is someone else's project (apex)
    load_failure: str = ""  # what it says when it has no native library for torch's CUDA ({cuda}: "128")
    load_override: str = ""  # the package's own way to load another CUDA minor's library
    runtime_nvcc: str = ""  # compiles its kernels at run time (DeepSpeed ops): what it prints without nvcc
    # builds native code with the C compiler at run time (Triton's launcher, at the first kernel): what it prints
    # without one; the render puts a C compiler and the Python headers into the image
    runtime_cc: str = ""
    build: SourceBuild | None = None
    releases: list[ExtensionRelease] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.package

    def cite_release(self, release: ExtensionRelease) -> str:
        return f"{self.FILE}#{self.package}{release.versions}: {release.source}"

    def release(self, version: str) -> ExtensionRelease | None:
        return next((r for r in self.releases if satisfies(version, r.versions)), None)

    def cuda_major_for(self, extras: str) -> int | None:
        """The CUDA major the distribution (with these ``[extras]``) is built for: cupy-cuda12x -> 12,
        jax[cuda13] -> 13; None when it follows the framework (flash-attn) or installs no CUDA (plain jax)."""
        if self.cuda_major is not None:
            return self.cuda_major
        for extra in extras.strip("[]").split(","):
            if extra.strip() in self.extras:
                return self.extras[extra.strip()]
        return None


class HostCompiler(Row):
    """The newest GCC the nvcc of a CUDA release accepts (host_config.h), and the GCC of a base OS."""

    FILE: ClassVar[str] = "extensions.yaml"

    cuda: Ver | None = None  # a CUDA "major.minor" from which on ``gcc_max`` holds (the newest row <= wins)
    gcc_max: int | None = None
    os: str | None = None  # "ubuntu22.04": the GCC its build-essential installs
    gcc: int | None = None

    @property
    def key(self) -> str:
        return f"cuda{self.cuda}" if self.cuda else f"{self.os}"


class TorchCudnnPin(Row):
    """The exact nvidia-cudnn wheel a torch wheel requires (its Requires-Dist)."""

    FILE: ClassVar[str] = "extensions.yaml"

    torch: str  # specifier on the torch version
    cuda: Ver  # the CUDA "major.minor" of the build (its variant tag)
    cudnn: Ver  # the pinned nvidia-cudnn-cuXX version

    @property
    def key(self) -> str:
        return f"torch{self.torch}+cu{self.cuda}"


def gcc_max(rows: list[HostCompiler], cuda: str) -> HostCompiler | None:
    """The row that says the newest GCC the nvcc of ``cuda`` accepts: the newest CUDA row at or before it."""
    from envgen.kb.versions import vtuple

    fitting = [r for r in rows if r.cuda and r.gcc_max is not None and vtuple(r.cuda) <= vtuple(cuda)[:2]]
    return max(fitting, key=lambda r: vtuple(r.cuda or "0"), default=None)


def os_gcc(rows: list[HostCompiler], os_name: str) -> HostCompiler | None:
    return next((r for r in rows if r.os == os_name and r.gcc is not None), None)


def torch_cudnn_pin(rows: list[TorchCudnnPin], torch: str, cuda: str) -> TorchCudnnPin | None:
    """The nvidia-cudnn pin of the torch ``torch`` wheel built for CUDA ``cuda`` ("12.8")."""
    return next((r for r in rows if r.cuda == cuda and satisfies(torch, r.torch)), None)


__all__ = ["CC", "ExtensionPackage", "ExtensionRelease", "HostCompiler", "SourceBuild", "TorchCudnnPin",
           "gcc_max", "os_gcc", "satisfies", "torch_cudnn_pin"]
