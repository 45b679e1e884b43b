"""Rows of the serving-engine layer (``engine_requires.yaml``): each vLLM, SGLang, sgl-kernel and FlashInfer
release's Requires-Python and the Requires-Dist lines of its chain (torch, xformers, FlashInfer, sgl-kernel, the
NVIDIA CUDA wheels), read from the core metadata of its PyPI wheel by ``tools.kbrefresh.engines``; and the
distributions or releases whose metadata could not be read (``engine_unread``), so that nothing is guessed."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from envgen.kb.models import Row
from envgen.kb.pypackages import FrameworkRequires, Release
from envgen.kb.specifiers import Specifier
from envgen.records import Record

ENGINES = ("vllm", "sglang")  # the distributions a profile names as its serving engine


class EngineRequires(FrameworkRequires):
    FILE: ClassVar[str] = "engine_requires.yaml"

    requires_python: Specifier = ""  # the wheel's Requires-Python, as written
    build_from: str = ""  # how ``build`` is known when the wheel names no CUDA wheel itself: its exact torch pin

    def pin(self, name: str, extras: frozenset[str] = frozenset()) -> str | None:
        """The exact version this release pins ``name`` to when installed with ``extras``, else None."""
        specs = [r.spec for r in self.requires if r.name == name and (not r.extra or r.extra in extras)]
        exact = {s[2:] for s in specs if s.startswith("==") and "," not in s}
        return next(iter(exact)) if len(exact) == 1 else None

    def pinned(self, name: str) -> set[str]:
        """Every exact version a line of this release (under any extra) pins ``name`` to."""
        return {r.spec[2:] for r in self.requires if r.name == name and r.spec.startswith("==") and "," not in r.spec}


class EngineUnread(Row):
    """A distribution (or one release) whose wheel metadata the refresh could not read, and why."""

    FILE: ClassVar[str] = "engine_requires.yaml"

    distribution: str
    version: Release | None = None
    why: str

    @property
    def key(self) -> str:
        return f"unread.{self.distribution}" + (f"=={self.version}" if self.version else "")


class EngineTrap(Row):
    """How an engine chain fails when one of its couplings is broken, in the engines' own words: the failure text
    a user reported in the engine's tracker (``source``: the thread). The check rules cite it beside the row
    whose pins show the coupling."""

    FILE: ClassVar[str] = "engine_traps.yaml"

    id: str  # the finding code it explains: "engine-replaces-torch"
    failure: str  # the text the engine (or pip) printed, quoted from the thread
    # engine-jit-toolkit: the GPUs (compute capability major) whose JIT kernels need at least this local CUDA
    cc_major: int | None = None
    cuda_min: str | None = None
    # engine-kernel-arch: the compiled objects (paths inside the wheels, as engine_arches.yaml names them) every model
    # calls, so a GPU they have no code for fails at the first request; the others hold optional backends
    objects: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.id


class KernelSet(Record):
    """Kernels of an object compiled for other architectures than its build set, and how many fat binaries."""

    codes: list[str]  # sm_89 sm_90 ... compute_90
    fatbins: int


class KernelObject(Record):
    """One shared object of a wheel and the GPU code its fat binaries hold."""

    file: str  # the member's path inside the wheel: vllm/_C.abi3.so
    # the object's build set (the most common code set among its multi-architecture fat binaries): cubins (sm_80,
    # arch-specific sm_90a, which runs on exactly 9.0) and PTX the driver can JIT for a newer GPU (compute_90)
    sm: list[str]
    ptx: list[str]
    fatbins: int  # how many fat binaries the object holds
    kernels: list[KernelSet] = field(default_factory=list)  # the fat binaries with another code set

    def sets(self) -> list[KernelSet]:
        """Every code set of the object: its build set first, then the other kernels'."""
        built = self.fatbins - sum(k.fatbins for k in self.kernels)
        return [KernelSet(codes=[*self.sm, *self.ptx], fatbins=built), *self.kernels]


class EngineArches(Row):
    """The GPU architectures one vLLM / sgl-kernel release's compiled kernels are built for, per shared object,
    read from the fat binaries of its PyPI wheel by ``tools.kbrefresh.engine_arch`` (``source``: the wheel and
    its sha256)."""

    FILE: ClassVar[str] = "engine_arches.yaml"

    distribution: str
    version: Release
    objects: list[KernelObject]

    @property
    def key(self) -> str:
        return f"{self.distribution}=={self.version}"


class EngineArchesUnread(EngineUnread):
    """A release (or a distribution) whose wheel's fat binaries were not read, and why."""

    FILE: ClassVar[str] = "engine_arches.yaml"
