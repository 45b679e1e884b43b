"""Rows of ``wheel_libraries.yaml`` (what each recorded binary wheel's shared objects ask the loader for: DT_NEEDED,
read from the wheel by ``tools.kbrefresh.wheel_libs``, never typed) and of ``gpu_builds.yaml`` (the builds of one
GPU package for each CUDA major, from the package's own documentation)."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from envgen.kb.models import Row
from envgen.records import Record


class WheelObject(Record):
    """One shared object of a wheel: its path inside the wheel, its DT_SONAME, its DT_NEEDED sonames."""

    file: str
    soname: str | None = None
    needed: list[str] = field(default_factory=list)

    @property
    def provides(self) -> set[str]:
        """The names a loader can find this object by: its soname and its file name."""
        return {self.file.rsplit("/", 1)[-1], *([self.soname] if self.soname else [])}


class WheelLibraries(Row):
    FILE: ClassVar[str] = "wheel_libraries.yaml"

    distribution: str  # PEP 503
    version: str
    wheel: str  # the file name: its tags say which Python and platform it serves
    objects: list[WheelObject]
    # the Requires-Dist lines of NVIDIA's library wheels a plain install pulls in, as written: their libraries come
    # with this wheel
    nvidia_requires: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.wheel

    @property
    def tags(self) -> tuple[str, str, str]:
        """(python, abi, platform) of the file name."""
        parts = self.wheel[:-4].split("-")
        return parts[-3], parts[-2], parts[-1]

    def serves(self, python: str, machine: str = "x86_64") -> bool:
        """Whether pip installs this wheel on CPython ``python`` ("3.11") of ``machine`` under Linux."""
        py, abi, platform = self.tags
        cp = "cp" + python.replace(".", "")
        fits_python = cp in py.split(".") or abi == "abi3" or py.startswith("py3")
        return fits_python and "linux" in platform and platform.endswith(machine)


class GpuBuilds(Row):
    """One GPU package's builds per CUDA major: the distribution (or index) that carries each, as its documentation
    states them."""

    FILE: ClassVar[str] = "gpu_builds.yaml"

    package: str  # the project's name: "cupy", "onnxruntime-gpu"
    builds: dict[str, str]  # CUDA major -> how to install that build: "cupy-cuda12x", "onnxruntime-gpu>=1.19 (PyPI)"
    distributions: list[str]  # the PEP 503 names the builds carry (one per major, or one for all)
    # library families (cuda_libraries.yaml) the documentation calls optional: only the feature that uses one fails
    # without it ("cudnn": cupy.cuda.cudnn), the package imports
    optional: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.package
