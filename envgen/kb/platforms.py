"""Row types of the platform tables: which releases have Linux aarch64 wheels (platform_wheels.yaml, read from PyPI's
index and the wheels by ``tools.kbrefresh.platform_wheels``) and the GPUs envgen refuses with the reason
(gpu_refusals.yaml: Jetson, whose CUDA comes from L4T/JetPack, not from the wheels and images envgen plans)."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from envgen.kb.models import Row, Ver


class PlatformWheel(Row):
    """One release on one platform: the CPython minors its manylinux wheels for it cover ([]: none on PyPI) and the
    CUDA its build carries (None: a CPU build, or not a framework), read from the wheel named."""

    FILE: ClassVar[str] = "platform_wheels.yaml"
    name: str
    version: str  # as PyPI names the release (2.15.0.post1, 2.25.1.post1)
    platform: Literal["linux/arm64"]
    python: list[str] = field(default_factory=list)
    framework: bool = False  # a framework build (torch, tensorflow): its CUDA read from the wheel, None = a CPU build
    cuda: Ver | None = None
    cuda_read: str = ""
    # the CUDA build's GPU code (SASS sm_XX, PTX compute_XX), read from its fat binaries; [] when not read
    arch_list: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    arch_source: str = ""
    wheel: str | None = None
    url: str | None = None
    sha256: str | None = None

    @property
    def key(self) -> str:
        return f"{self.name}=={self.version}@{self.platform}"

    def serves(self, python: str) -> bool:
        """A wheel of this release installs on CPython ``python`` (major.minor) on the platform."""
        return python in self.python or "py3" in self.python


class GpuRefusal(Row):
    """GPUs envgen does not plan for, matched by name prefix, with the reason and what to use instead."""

    FILE: ClassVar[str] = "gpu_refusals.yaml"
    prefix: str  # "Jetson": matches "Jetson AGX Orin", "jetson orin nano", ...
    reason: str
    instead: str

    @property
    def key(self) -> str:
        return self.prefix

    def matches(self, target: str) -> bool:
        return target.strip().lower().startswith(self.prefix.lower())
