"""Which compiled objects of a serving engine's wheel a GPU runs (``engine_arches.yaml``): shared by check's
``engine-kernel-arch`` rule and by suggest, which writes no release whose kernels exclude the GPU."""

from __future__ import annotations

from envgen.kb.builds import kernel_coverage
from envgen.kb.engines import EngineArches, EngineRequires, KernelObject, KernelSet
from envgen.kb.knowledge import KnowledgeBase

KERNEL_PACKAGES = ("sgl-kernel", "sglang-kernel")  # SGLang's compiled kernels live in these, not in its own wheel


def arch_row(kb: KnowledgeBase, distribution: str, version: str) -> EngineArches | None:
    return next((r for r in kb.engine_arches if r.distribution == distribution and r.version == version), None)


def arch_specific(obj: KernelObject) -> bool:
    """Only arch-specific cubins (``sm_90a``) and no PTX: the object runs on exactly those compute capabilities."""
    return bool(obj.sm) and not obj.ptx and all(s.endswith("a") for s in obj.sm)


def runs(cc: str, codes: list[str]) -> bool:
    """A GPU of compute capability ``cc`` runs code built for ``codes`` (cubins sm_XX, PTX compute_XX)."""
    sm = [c for c in codes if c.startswith("sm_")]
    return kernel_coverage(cc, sm, [c for c in codes if c.startswith("compute_")]) != "none"


def missing(row: EngineArches, cc: str) -> list[KernelObject]:
    """The row's shared objects whose build set has no code a GPU of compute capability ``cc`` runs."""
    return [o for o in row.objects if not runs(cc, o.sm + o.ptx)]


def kernels_without(row: EngineArches, cc: str) -> list[tuple[KernelObject, KernelSet]]:
    """Kernels compiled for other architectures only (sm_90a CUTLASS, sm_89+), in objects that otherwise run."""
    return [(o, k) for o in row.objects if runs(cc, o.sm + o.ptx) for k in o.kernels if not runs(cc, k.codes)]


def fails_on(row: EngineArches, cc: str) -> list[KernelObject]:
    """The objects that fail on ``cc`` with "no kernel image": built for other GPUs without PTX it can JIT (the
    arch-specific ones are left out: the engine uses their features only on their own GPU)."""
    return [o for o in missing(row, cc) if not arch_specific(o)]


def compiled_rows(kb: KnowledgeBase, engine: EngineRequires,
                  extras: frozenset[str] = frozenset()) -> list[EngineArches]:
    """The arch rows of what an engine release installs compiled: vLLM's own wheel, SGLang's pinned sgl-kernel."""
    wanted = [(engine.distribution, engine.version)]
    wanted += [(name, pin) for name in KERNEL_PACKAGES for pin in [engine.pin(name, extras)] if pin]
    return [row for name, version in wanted for row in [arch_row(kb, name, version)] if row is not None]


def core_objects(kb: KnowledgeBase) -> set[str]:
    """The compiled objects every model calls (engine_traps.yaml's engine-kernel-arch row names them)."""
    trap = next((t for t in kb.engine_traps if t.id == "engine-kernel-arch"), None)
    return set(trap.objects) if trap is not None else set()


def core_fails_on(kb: KnowledgeBase, row: EngineArches, cc: str) -> list[KernelObject]:
    """The core objects of ``row`` with no code for compute capability ``cc``."""
    core = core_objects(kb)
    return [o for o in fails_on(row, cc) if o.file in core]
