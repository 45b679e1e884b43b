"""Rows of ``cuda_libraries.yaml``: which soname a CUDA library family has for a CUDA (or cuDNN) release,
which wheel and conda packages carry it, and how each framework finds its libraries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from envgen.kb.models import Row, Ver
from envgen.kb.versions import vtuple


class CudaLibrary(Row):
    FILE: ClassVar[str] = "cuda_libraries.yaml"

    family: str
    # what the soname keys name: a CUDA release, a cuDNN major, an NCCL major
    keyed_by: Literal["cuda", "cudnn", "nccl"]
    sonames: dict[str, str]
    pip: str | None = None  # "nvidia-cublas-cu{major}"
    pip_dir: str | None = None  # site-packages/nvidia/<pip_dir>/lib
    # where a CUDA major's wheels break the pattern ("13": nvidia-cublas, into nvidia/cu13/lib)
    pip_by_major: dict[str, str] = field(default_factory=dict)
    pip_dir_by_major: dict[str, str] = field(default_factory=dict)
    conda: list[str] = field(default_factory=list)
    version_call: str | None = None  # the call that makes the library say its version
    decode: str | None = None  # how the smoke probe reads that call's answer
    notes: str = ""

    @property
    def key(self) -> str:
        return self.family

    def soname(self, version: str) -> str | None:
        """The soname for a release: its "major.minor" key, else its "major" key."""
        parts = vtuple(version)
        for key in (f"{parts[0]}.{parts[1] if len(parts) > 1 else 0}", str(parts[0])):
            if key in self.sonames:
                return self.sonames[key]
        return None

    def pip_name(self, cuda_major: int) -> str | None:
        if str(cuda_major) in self.pip_by_major:
            return self.pip_by_major[str(cuda_major)]
        return self.pip.format(major=cuda_major) if self.pip and cuda_major >= 11 else None

    def lib_dir(self, cuda_major: int | None) -> str | None:
        """site-packages/nvidia/<this>/lib for the wheel of ``cuda_major``."""
        return self.pip_dir_by_major.get(str(cuda_major), self.pip_dir)

    def site_dir(self, cuda_major: int | None) -> str:
        """Where the wheel of ``cuda_major`` puts the library, relative to site-packages: nvidia/<lib_dir>/lib (the
        one statement of that layout: the render's LD_LIBRARY_PATH and the check's survey both read it)."""
        return f"nvidia/{self.lib_dir(cuda_major)}/lib"


_SUFFIXED = re.compile(r"^(nvidia-([a-z0-9-]+?)-cu(\d+))==(.+)$")


@dataclass(frozen=True)
class NvidiaWheel:
    """A pin of one of NVIDIA's library wheels."""

    distribution: str  # nvidia-cudnn-cu11, nvidia-cublas
    cuda_major: int
    version: str

    @property
    def stem(self) -> str:
        """The wheel's name without its CUDA suffix (nvidia-cudnn-cu12 -> nvidia-cudnn): one library family, one
        wheel per CUDA major, all installing into the same site-packages/nvidia/<family>/lib."""
        m = _SUFFIXED.match(f"{self.distribution}=={self.version}")
        return f"nvidia-{m.group(2)}" if m else self.distribution


def nvidia_wheel(spec: str) -> NvidiaWheel | None:
    """nvidia-cudnn-cu11==8.6.0.163, and the suffix-less names the CUDA 13 toolkit wheels use
    (nvidia-cublas==13.1.0.3), taken as CUDA 13. Extras (``[...]``) are dropped."""
    name, _, version = spec.lower().partition("==")
    name = name.split("[", 1)[0].strip()
    m = _SUFFIXED.match(f"{name}=={version}")
    if m:
        return NvidiaWheel(m.group(1), int(m.group(3)), m.group(4))
    if name.startswith("nvidia-") and version:
        return NvidiaWheel(name, 13, version)
    return None


def wheel_rows(rows: Iterable[CudaLibrary], wheel: NvidiaWheel) -> list[CudaLibrary]:
    """The library families a wheel carries."""
    return [row for row in rows if row.pip_name(wheel.cuda_major) == wheel.distribution]


def wheel_lib_dirs(rows: Iterable[CudaLibrary], wheel: NvidiaWheel) -> list[str]:
    """Where a wheel puts its libraries, relative to site-packages: ``nvidia/<lib_dir>/lib`` of the families it
    carries; a -cuNN wheel with no row here (nvidia-cuda-nvcc-cu11) by its name's own convention
    (nvidia/cuda_nvcc/lib); nothing for a suffix-less one with no row."""
    dirs = {row.site_dir(wheel.cuda_major) for row in wheel_rows(rows, wheel)}
    if dirs:
        return sorted(dirs)
    m = _SUFFIXED.match(f"{wheel.distribution}=={wheel.version}")
    return [f"nvidia/{m.group(2).replace('-', '_')}/lib"] if m else []


class FrameworkLibraries(Row):
    FILE: ClassVar[str] = "cuda_libraries.yaml"

    framework: Literal["tensorflow", "pytorch"]
    package: str = "any"  # a pip distribution ("tensorflow[and-cuda]"), or any
    provision: Literal["search_path", "wheel_deps", "bundled"]
    families: list[str]
    since: Ver | None = None  # first release the row covers
    until: Ver | None = None  # first release it no longer covers
    cudnn_major: int | None = None
    notes: str = ""

    @property
    def key(self) -> str:
        return f"{self.framework}:{self.package}:{self.since or ''}-{self.until or ''}"

    def covers(self, version: str, package: str | None) -> bool:
        if self.package != "any" and self.package != package:
            return False
        v = vtuple(version)
        if self.since and v < vtuple(self.since):
            return False
        return not (self.until and v >= vtuple(self.until))


class TensorflowLibraries(Row):
    """How a profile gives TensorFlow built for ``cuda`` its CUDA/cuDNN libraries (before tensorflow[and-cuda])."""

    FILE: ClassVar[str] = "tensorflow_libraries.yaml"

    cuda: str
    cudnn: str
    conda: list[str]
    pip_cudnn: str | None = None  # "nvidia-cudnn-cu11==8.6.0.163": cuDNN from NVIDIA's wheel, not conda

    @property
    def key(self) -> str:
        return self.cuda
