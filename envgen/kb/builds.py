"""The builds of each framework that can serve a GPU and a driver, from the knowledge base alone.

Knowledge-base queries shared by `envgen suggest` (which combines the builds into stacks) and by the check rules
(the one statement of the kernel-coverage rule, and the "nearest that has" line of an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.models import TensorflowBuild, TorchRelease, TorchVariant
from envgen.kb.versions import at_least, cc_tuple, sm_to_cc, vtuple

Coverage = Literal["exact", "binary", "ptx", "none"]
DriverFit = Literal["ok", "minor-compat", "too-old", "unknown"]


def kernel_coverage(cc: str, arch_list: list[str], ptx: list[str]) -> Coverage:
    """How a GPU of compute capability ``cc`` runs a build (CUDA C++ Programming Guide, "Binary Compatibility"):
    "exact" (a cubin for it), "binary" (a cubin of the same major and a lower minor: sm_86 code runs on sm_89;
    an arch-specific ``sm_90a`` cubin only on exactly 9.0), "ptx" (no same-major cubin; the driver JIT-compiles
    PTX of an equal or lower capability) or "none"."""
    want = cc_tuple(cc)
    cubins = [(sm_to_cc(a), a.endswith("a")) for a in arch_list]
    if any(c == want for c, _ in cubins):
        return "exact"
    if any(c[0] == want[0] and c[1] < want[1] and not arch_specific for c, arch_specific in cubins):
        return "binary"
    if any(sm_to_cc(p) <= want and not p.endswith("a") for p in ptx):
        return "ptx"
    return "none"


def driver_fit(kb: KnowledgeBase, cuda: str, driver: str | None) -> DriverFit:
    """Whether a Linux driver runs CUDA ``cuda``: at its minimum, within minor-version compatibility, or not."""
    toolkit = kb.cuda(cuda)
    if toolkit is None:
        return "unknown"
    if driver is None or at_least(driver, toolkit.driver_linux_min) is True:
        return "ok"
    compat = toolkit.minor_compat_driver_min
    if compat is not None and at_least(driver, compat) is True:
        return "minor-compat"
    return "too-old"


@dataclass(frozen=True)
class TorchBuild:
    release: TorchRelease
    variant: TorchVariant
    coverage: Coverage

    @property
    def label(self) -> str:
        return f"{self.release.version}+{self.variant.tag}"

    @property
    def cuda(self) -> str:
        return self.variant.cuda or ""


def torch_builds(kb: KnowledgeBase, cc: str, driver: str | None = None, *, ptx: bool = False) -> list[TorchBuild]:
    """Every CUDA build with a cubin for ``cc`` (and, with ``ptx``, those that reach it by PTX JIT) that the driver
    can run (minor-version compatibility included), newest release first, newest CUDA first within a release."""
    out = []
    for release in sorted(kb.pytorch, key=lambda r: vtuple(r.version), reverse=True):
        variants = sorted((v for v in release.variants if v.cuda), key=lambda v: vtuple(v.cuda or ""), reverse=True)
        for variant in variants:
            coverage = kernel_coverage(cc, variant.arch_list, variant.ptx)
            if coverage == "none" or (coverage == "ptx" and not ptx):
                continue
            if driver_fit(kb, variant.cuda or "", driver) in ("too-old", "unknown"):
                continue
            out.append(TorchBuild(release, variant, coverage))
    return out


def nearest_torch_builds(
    kb: KnowledgeBase, cc: str, version: str, cuda: str | None, driver: str | None = None, limit: int = 3
) -> list[str]:
    """The builds closest to ``version``+``cuda`` that have a cubin for ``cc`` and run on ``driver``: the same
    release's other variants first, then releases by distance (older before newer at equal distance)."""
    releases = sorted({r.version for r in kb.pytorch}, key=vtuple)
    where = {v: i for i, v in enumerate(releases)}
    here = where.get(next((r.version for r in kb.pytorch if vtuple(r.version) == vtuple(version)), ""))
    builds = torch_builds(kb, cc, driver)
    if here is None:
        return [b.label for b in builds[:limit]]

    def distance(build: TorchBuild) -> tuple[int, int, int]:
        steps = where[build.release.version] - here
        gap = abs(_cuda_num(build.cuda) - _cuda_num(cuda)) if cuda else 0
        return abs(steps), 0 if steps <= 0 else 1, gap

    return [b.label for b in sorted(builds, key=distance)[:limit]]


def _cuda_num(cuda: str) -> int:
    parts = vtuple(cuda)
    return parts[0] * 10 + (parts[1] if len(parts) > 1 else 0)


def tensorflow_builds(kb: KnowledgeBase, cc: str, driver: str | None = None) -> list[TensorflowBuild]:
    """TensorFlow series whose CUDA can target ``cc`` and runs on ``driver``, newest first. (The knowledge base has
    no per-release TensorFlow arch list: the CUDA toolkit's range stands in for it.)"""
    out = []
    for build in sorted(kb.tensorflow, key=lambda r: vtuple(r.series), reverse=True):
        toolkit = kb.cuda(build.cuda)
        if toolkit is None or cc_tuple(cc) < cc_tuple(toolkit.cc_min):
            continue
        if driver_fit(kb, build.cuda, driver) in ("too-old", "unknown"):
            continue
        out.append(build)
    return out
