"""Which cluster nodes an image runs on, for the cluster exports, from the plan's preflight facts (``plan.preflight``:
the driver each CUDA runtime the image calls needs, the GPU code each framework build ships) and the GPUs the
knowledge base knows (gpus.yaml), judged by the rule check uses (``kb.builds.kernel_coverage``).

- Kubernetes node affinity on the labels NVIDIA's GPU Feature Discovery publishes on GPU nodes
  (``nvidia.com/gpu.compute.major``/``.minor``, ``nvidia.com/cuda.driver.major``; NVIDIA/gpu-feature-discovery,
  README "Generated Labels", now in NVIDIA/k8s-device-plugin): one term per compute-capability major the image
  serves, each with the driver's major at or above the floor's (the preflight checks the exact version).
- A DRA selector (``resource.k8s.io/v1`` ResourceClaimTemplate, device class ``gpu.nvidia.com`` of NVIDIA's DRA
  driver, whose devices carry the version attributes ``cudaComputeCapability`` and ``driverVersion``): a CEL
  expression with the binary-compatibility rule itself, so it also admits GPUs newer than the knowledge base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envgen.kb.builds import kernel_coverage
from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.versions import sm_to_cc, vtuple

DRA_DOMAIN = "gpu.nvidia.com"


@dataclass(frozen=True)
class Selection:
    driver_floor: str | None  # the oldest driver the image runs on (minor-version compatibility included)
    ccs: tuple[str, ...]  # the compute capabilities of the KB's GPUs that every framework's code serves
    code: tuple[tuple[str, ...], ...]  # each framework's cubins and PTX (empty: not read, no constraint)


def selection(preflight: Mapping[str, Any], kb: KnowledgeBase) -> Selection | None:
    """None for an image that needs no GPU."""
    if not preflight.get("gpu_required"):
        return None
    floors = [d.get("minor_compat_min") or d.get("driver_min") for d in preflight.get("drivers", [])]
    floor = max((f for f in floors if f), key=vtuple, default=None)
    code = tuple(tuple(k["code"]) for k in preflight.get("kernels", []) if k.get("code"))
    known = sorted({g.compute_capability for g in kb.gpus}, key=vtuple)
    ccs = tuple(cc for cc in known if all(_serves(cc, c) for c in code)) if code else ()
    return Selection(driver_floor=floor, ccs=ccs, code=code)


def _serves(cc: str, code: Sequence[str]) -> bool:
    cubins = [c for c in code if c.startswith("sm_")]
    ptx = [c for c in code if c.startswith("compute_")]
    return kernel_coverage(cc, cubins, ptx) != "none"


def node_affinity_terms(sel: Selection) -> list[list[dict[str, Any]]]:
    """nodeSelectorTerms (ORed), each a list of matchExpressions (ANDed); [] when nothing narrows the nodes."""
    driver = ([{"key": "nvidia.com/cuda.driver.major", "operator": "Gt",
                "values": [str(vtuple(sel.driver_floor)[0] - 1)]}] if sel.driver_floor else [])
    by_major: dict[str, list[str]] = {}
    for cc in sel.ccs:
        major, _, minor = cc.partition(".")
        by_major.setdefault(major, []).append(minor or "0")
    terms = [[{"key": "nvidia.com/gpu.compute.major", "operator": "In", "values": [major]},
              {"key": "nvidia.com/gpu.compute.minor", "operator": "In", "values": minors}, *driver]
             for major, minors in by_major.items()]
    return terms or ([driver] if driver else [])


def _semver(version: str) -> str:
    parts = [str(p) for p in vtuple(version)[:3]]
    return ".".join(parts + ["0"] * (3 - len(parts)))


def _minimal(code: Sequence[str]) -> list[str]:
    """``code`` less what another entry already serves: one cubin per major (its lowest minor), the lowest PTX,
    and no cubin that the lowest PTX already serves."""
    ptx = min((sm_to_cc(c) for c in code if c.startswith("compute_") and not c.endswith("a")), default=None)
    lowest: dict[int, tuple[int, int]] = {}
    exact = []
    for arch in code:
        cc = sm_to_cc(arch)
        if not arch.startswith("sm_") or (ptx is not None and cc >= ptx):
            continue
        if arch.endswith("a"):
            exact.append(f"sm_{cc[0]}{cc[1]}a")
        elif cc[0] not in lowest or cc < lowest[cc[0]]:
            lowest[cc[0]] = cc
    kept = [f"sm_{m}{n}" for m, n in sorted(lowest.values())] + sorted(set(exact))
    return kept + ([f"compute_{ptx[0]}{ptx[1]}"] if ptx is not None else [])


def _code_clause(code: Sequence[str]) -> str:
    """CEL: the device's compute capability runs one of ``code`` (a cubin of the same major at or below its minor,
    an arch-specific cubin on exactly its own, PTX at or below it)."""
    cc = f'device.attributes["{DRA_DOMAIN}"].cudaComputeCapability'
    ors = []
    for arch in _minimal(code):
        major, minor = sm_to_cc(arch)
        low = f'{cc}.compareTo(semver("{major}.{minor}.0"))'
        if arch.startswith("sm_") and arch.endswith("a"):
            ors.append(f"{low} == 0")
        elif arch.startswith("sm_"):
            ors.append(f'({low} >= 0 && {cc}.compareTo(semver("{major + 1}.0.0")) < 0)')
        else:
            ors.append(f"{low} >= 0")
    return "(" + " ||\n ".join(ors) + ")"


def cel_selector(sel: Selection) -> str:
    """The DRA device selector: every framework's code runs on the device, and its driver is at the floor."""
    clauses = [_code_clause(code) for code in sel.code]
    if sel.driver_floor:
        clauses.append(f'device.attributes["{DRA_DOMAIN}"].driverVersion.compareTo(semver('
                       f'"{_semver(sel.driver_floor)}")) >= 0')
    return " &&\n".join(clauses) or "true"
