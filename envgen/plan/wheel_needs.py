"""The CUDA libraries the binary wheels of ``packages.pip`` load, matched against what the image provides.

A pinned line whose wheel for the image's CPython (Linux x86-64) is recorded in ``wheel_libraries.yaml`` (its objects'
DT_NEEDED, read from the wheel by ``tools.kbrefresh.wheel_libs``) needs every soname of a CUDA library family
(``cuda_libraries.yaml``: cudart, cuBLAS, cuDNN, NCCL...) its objects name. Each is provided, or not, by the image:
the distributions ``plan.libraries`` surveys (the base image, conda, the NVIDIA wheels of the set, the wheels a
framework pulls in), the NVIDIA wheels a recorded wheel itself requires, and the objects of the recorded wheels of the
set, the wheel's own included (a library it or another wheel bundles). Pure: ``Stack.wheel_libraries`` holds the
result for one profile; check's ``libraries.wheels`` and the probe's expectations (``plan.expected``) read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envgen.kb import KnowledgeBase
from envgen.kb.libraries import nvidia_wheel, wheel_rows
from envgen.kb.wheel_libraries import WheelLibraries
from envgen.plan.libraries import Provider, soname_for
from envgen.profile.requirements import PipLine


@dataclass(frozen=True)
class WheelNeed:
    distribution: str
    version: str
    origin: str  # "packages.pip[0]"
    row: WheelLibraries  # the recorded wheel
    objects: tuple[str, ...]  # the wheel's objects whose DT_NEEDED names it
    soname: str
    family: str
    cuda_major: int | None  # the CUDA major the soname belongs to, when only one has it (libcudart.so.12: 12)
    provided_by: str | None  # who provides it in the image; None: nothing does
    optional: bool = False  # a family the package's documentation calls optional (gpu_builds.yaml)


@dataclass(frozen=True)
class Unrecorded:
    """A GPU build (``gpu_builds.yaml``) of the set whose wheel for the image is not recorded: not judged."""

    distribution: str
    version: str
    origin: str


@dataclass(frozen=True)
class WheelSurvey:
    needs: tuple[WheelNeed, ...]
    unrecorded: tuple[Unrecorded, ...]

    def missing(self, optional: bool = False) -> list[WheelNeed]:
        """The needs nothing provides: the required ones, or (``optional``) those only an optional feature has."""
        return [n for n in self.needs if n.provided_by is None and n.optional == optional]


def soname_families(kb: KnowledgeBase) -> dict[str, tuple[str, int | None]]:
    """soname -> (family, the CUDA major it belongs to when its keys name one major; None for cuDNN and NCCL, keyed
    by their own versions, and for a soname two CUDA majors share: libcusolver.so.11)."""
    majors: dict[str, tuple[str, set[int]]] = {}
    for lib in kb.cuda_libraries:
        for key, soname in lib.sonames.items():
            family, seen = majors.setdefault(soname, (lib.family, set()))
            if lib.keyed_by == "cuda":
                seen.add(int(key.split(".")[0]))
    return {s: (f, next(iter(m)) if len(m) == 1 else None) for s, (f, m) in majors.items()}


def recorded_wheel(kb: KnowledgeBase, name: str, version: str, python: str) -> WheelLibraries | None:
    """The recorded wheel pip installs for ``name==version`` on CPython ``python`` (Linux x86-64), if read."""
    return next((r for r in kb.wheel_libraries
                 if r.distribution == name and r.version == version and r.serves(python)), None)


def _required_wheels(kb: KnowledgeBase, row: WheelLibraries) -> list[tuple[str, str]]:
    """(soname, who) of the libraries the NVIDIA wheels ``row`` requires bring (``nvidia-cublas-cu12``: cuBLAS for
    CUDA 12; cuDNN by the version its requirement names)."""
    out = []
    for line in row.nvidia_requires:
        name = re.split(r"[\s\[;<>=!~(]", line, maxsplit=1)[0].lower()
        version = re.search(r"\d+(?:\.\d+)*", line[len(name):].partition(";")[0])
        wheel = nvidia_wheel(f"{name}=={version.group(0) if version else '0'}")
        if wheel is None:
            continue
        for lib in wheel_rows(kb.cuda_libraries, wheel):
            soname = soname_for(lib, str(wheel.cuda_major), version.group(0) if version else None)
            if soname:
                out.append((soname, f"{row.distribution} {row.version}'s dependency {line}"))
    return out


def _pinned(lines: tuple[PipLine, ...], python: str) -> list[tuple[str, str, str]]:
    return [(line.name, line.exact, f"packages.pip[{i}]") for i, line in enumerate(lines)
            if line.exact and line.applies(python)]


def wheel_libraries(kb: KnowledgeBase, lines: tuple[PipLine, ...], python: str,
                    providers: tuple[Provider, ...]) -> WheelSurvey:
    """Every CUDA-family soname the set's recorded wheels load, with who provides it (``providers``: the
    ``plan.libraries`` survey's)."""
    families = soname_families(kb)
    gpu_builds = {d: row for row in kb.gpu_builds for d in row.distributions}
    rows: list[tuple[str, WheelLibraries]] = []
    unrecorded: list[Unrecorded] = []
    for name, version, origin in _pinned(lines, python):
        row = recorded_wheel(kb, name, version, python)
        if row is not None:
            rows.append((origin, row))
        elif name in gpu_builds:
            unrecorded.append(Unrecorded(name, version, origin))
    provided = {p.soname: p.origin for p in reversed(providers)}
    for _, row in rows:
        for soname, origin in _required_wheels(kb, row):
            provided.setdefault(soname, origin)
        for obj in row.objects:
            for soname in obj.provides:
                provided.setdefault(soname, f"{row.distribution} {row.version}'s {obj.file}")
    needs: list[WheelNeed] = []
    for origin, row in rows:
        by_soname: dict[str, list[str]] = {}
        for obj in row.objects:
            for soname in obj.needed:
                if soname in families:
                    by_soname.setdefault(soname, []).append(obj.file)
        for soname, files in sorted(by_soname.items()):
            family, major = families[soname]
            builds = gpu_builds.get(row.distribution)
            needs.append(WheelNeed(row.distribution, row.version, origin, row, tuple(files), soname, family, major,
                                   provided.get(soname), builds is not None and family in builds.optional))
    return WheelSurvey(tuple(needs), tuple(unrecorded))
