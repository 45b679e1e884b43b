"""The GPU code of the serving engines' compiled kernels (``engine_arches.yaml``, read from the fat binaries of their
wheels) against the target GPUs: a shared object with neither a cubin of the GPU's family nor PTX it can JIT fails
with CUDA's "no kernel image is available for execution on the device" (vllm#18995); one built only for
arch-specific targets (``sm_90a``: Hopper) has its kernels on that GPU alone."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.engines.pins import pinned_engines, trap_of
from envgen.check.findings import Finding
from envgen.check.packages.installs import installed
from envgen.check.util import finding
from envgen.kb import KnowledgeBase
from envgen.kb.engine_kernels import (
    KERNEL_PACKAGES,
    arch_row,
    arch_specific,
    compiled_rows,
    core_fails_on,
    core_objects,
    kernels_without,
    missing,
)
from envgen.kb.engines import EngineArches, KernelObject, KernelSet
from envgen.kb.versions import cc_to_sm, vtuple


def kernel_rows(ctx: CheckContext) -> list[tuple[str, EngineArches]]:
    """(who brings it, the arch row) of every compiled engine release the image installs: the pinned vLLM, the
    sgl-kernel a pinned SGLang pins, the profile's own sgl-kernel."""
    have = installed(ctx)
    out: dict[tuple[str, str], tuple[str, EngineArches]] = {}
    for item, row in pinned_engines(ctx, have):
        for arches in compiled_rows(ctx.kb, row, item.extras):
            who = item.label if arches.distribution == item.name else \
                f"{arches.distribution}=={arches.version} (pinned by {item.label})"
            out[(arches.distribution, arches.version)] = (who, arches)
    for name in KERNEL_PACKAGES:
        own = arch_row(ctx.kb, name, have[name].version) if name in have else None
        if own is not None:
            out[(name, own.version)] = (have[name].label, own)
    return list(out.values())


def _codes(obj: KernelObject) -> str:
    return " ".join(obj.sm + obj.ptx)


def _listed(objs: list[KernelObject]) -> str:
    return "; ".join(f"{o.file} ({_codes(o)})" for o in objs)


def _notes(row: EngineArches, cc: str, core: set[str]) -> list[str]:
    """What is not available on ``cc`` besides the core: optional objects and kernel sets with no code for it."""
    optional = [o for o in missing(row, cc) if o.file not in core]
    said = [f"{o.file} ({_codes(o)}{', arch-specific only' if arch_specific(o) else ''})" for o in optional]
    by_object: dict[str, list[KernelSet]] = {}
    totals = {o.file: o.fatbins for o in row.objects}
    for obj, kernels in kernels_without(row, cc):
        by_object.setdefault(obj.file, []).append(kernels)
    said += [f"{sum(k.fatbins for k in sets)} of {totals[file]} fat binaries of {file} (built for "
             f"{' / '.join(' '.join(k.codes) for k in sets)})" for file, sets in by_object.items()]
    return said


def kernel_arch(ctx: CheckContext) -> list[Finding]:
    """Each target GPU against the compiled objects of the engine's wheel: the objects every model calls (the trap
    row's ``objects``) with no code for it are an error; optional backends and kernels built for other
    architectures only (sm_90a CUTLASS, sm_89+) are a note naming them."""
    said, cite = trap_of(ctx.kb, "engine-kernel-arch")
    core = core_objects(ctx.kb)
    out = []
    for who, row in kernel_rows(ctx):
        for target in ctx.targets:
            if target.model is None:
                continue
            cc = target.model.compute_capability
            label = f"{target.label} ({cc_to_sm(cc)}, compute capability {cc})"
            failing = core_fails_on(ctx.kb, row, cc)
            if failing:
                out.append(finding(
                    "error", "engine-kernel-arch",
                    f"{who}'s core kernels have no code for {label}: {_listed(failing)} hold neither a cubin of its "
                    f"family nor PTX it can JIT; its first kernel call fails{said}",
                    _fix(ctx.kb, row, cc), row.cite() + cite))
            notes = _notes(row, cc, core)
            if notes:
                out.append(finding(
                    "info", "engine-kernel-arch-partial",
                    f"{who}: no code for {label} in {'; '.join(notes)}: what those kernels implement (backends, "
                    "kernels built for other architectures only) is not available there",
                    "nothing to change if the engine picks another backend on this GPU; use a GPU they were built "
                    "for to use them", row.cite()))
    return out


def _fix(kb: KnowledgeBase, row: EngineArches, cc: str) -> str:
    """The nearest recorded release whose core objects all cover ``cc``: the oldest newer one, else the newest
    older one."""
    covering = sorted((r.version for r in kb.engine_arches if r.distribution == row.distribution
                       and not core_fails_on(kb, r, cc)), key=vtuple)
    newer = [v for v in covering if vtuple(v) > vtuple(row.version)]
    if newer:
        return (f"use {row.distribution} {newer[0]} or newer (its wheel's core kernels include compute capability "
                f"{cc}), with the torch it pins")
    if covering:
        return (f"use {row.distribution} {covering[-1]} (the newest recorded release whose core kernels include "
                f"compute capability {cc}), with the torch it pins, or another GPU")
    return f"no recorded {row.distribution} wheel covers compute capability {cc}: build it from source for it"


RULES = [kernel_arch]
