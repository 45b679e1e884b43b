"""Rows of ``pinned_releases.yaml``: for each release a framework's Requires-Dist pins exactly
(``tensorflow[and-cuda]==2.15.0`` pins ``tensorrt-libs==8.6.1``), what PyPI serves of it: the CPython minors with a
Linux x86_64 wheel, and whether there is an sdist. A pin PyPI has nothing of for the image's Python makes the
whole set uninstallable, however well the ranges meet. Read from PyPI's simple index by
``tools.kbrefresh.pins``, never typed by hand."""

from __future__ import annotations

from typing import ClassVar

from envgen.kb.models import Row


class PinnedRelease(Row):
    FILE: ClassVar[str] = "pinned_releases.yaml"

    name: str  # PEP 503
    version: str
    pythons: list[str]  # CPython minors with a wheel pip installs on Linux x86_64 (py3/abi3/any included)
    sdist: bool  # an sdist pip may build for the others

    @property
    def key(self) -> str:
        return f"{self.name}=={self.version}"

    def installs(self, python: str) -> bool:
        return self.sdist or python in self.pythons


class NvidiaWheelFile(Row):
    """One Linux x86_64 file of an NVIDIA CUDA wheel release (``nvidia_wheel_files.yaml``, read from PyPI's simple
    index by ``tools.kbrefresh.wheel_sizes``): what a second copy of its libraries costs to download."""

    FILE: ClassVar[str] = "nvidia_wheel_files.yaml"

    name: str  # PEP 503
    version: str
    filename: str
    url: str
    sha256: str
    size: int  # bytes (PEP 700)

    @property
    def key(self) -> str:
        return self.filename
