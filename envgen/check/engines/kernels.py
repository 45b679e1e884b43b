"""The serving engines' kernel packages (``engine_requires.yaml``): ``flashinfer-cubin`` at another version than
``flashinfer-python`` (FlashInfer refuses to start), and ``sgl-kernel`` beside a torch other than the one it was
built against (its wheel declares no torch; the SGLang releases that pin it pin the torch it was built with)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.engines.pins import pinned_engines, torch_of, trap_of
from envgen.check.findings import Finding
from envgen.check.packages.installs import installed
from envgen.check.util import finding
from envgen.kb.versions import vtuple

_KERNELS = ("sgl-kernel", "sglang-kernel")


def flashinfer_cubin(ctx: CheckContext) -> list[Finding]:
    """flashinfer-cubin (the pre-built kernels) must be the same release as flashinfer-python."""
    have = installed(ctx)
    cubin = have.get("flashinfer-cubin")
    if cubin is None:
        return []
    python, source = have.get("flashinfer-python"), "packages.pip"
    engines = pinned_engines(ctx, have)
    if python is None:
        pinned = next(((row, v) for item, row in engines for v in [row.pin("flashinfer-python", item.extras)] if v),
                      None)
        if pinned is None:
            return []
        version, source, cite = pinned[1], f"{pinned[0].distribution} {pinned[0].version}'s pin", pinned[0].cite()
    else:
        version, cite = python.version, ""
    if vtuple(version) == vtuple(cubin.version) and version == cubin.version:
        return []
    said, trap = trap_of(ctx.kb, "engine-flashinfer-cubin")
    return [finding(
        "error", "engine-flashinfer-cubin",
        f"flashinfer-cubin {cubin.version} beside flashinfer-python {version} ({source}): FlashInfer checks that "
        f"both are the same release and refuses to start{said}",
        f"pin flashinfer-cubin=={version}, or drop it (FlashInfer then fetches or compiles its kernels)",
        (cite + trap).lstrip("; "))]


def sgl_kernel_torch(ctx: CheckContext) -> list[Finding]:
    """A pinned sgl-kernel beside a torch no SGLang release pairs it with: its ops link against libtorch."""
    have = installed(ctx)
    torch = torch_of(ctx, have)
    out = []
    for name in _KERNELS:
        kernel = have.get(name)
        if kernel is None or torch is None:
            continue
        pairs = [r for r in ctx.kb.engine_requires if r.distribution == "sglang" and kernel.version in r.pinned(name)
                 and r.pinned("torch")]
        built = sorted({p for r in pairs for p in r.pinned("torch")}, key=vtuple)
        if not built or any(vtuple(torch) == vtuple(b) for b in built):
            continue
        said, trap = trap_of(ctx.kb, "engine-sgl-kernel-torch")
        newest = max(pairs, key=lambda r: vtuple(r.version))
        out.append(finding(
            "error", "engine-sgl-kernel-torch",
            f"{kernel.label} is built against torch {' or '.join(built)} (the SGLang releases that pin it, newest "
            f"{newest.version}, pin torch=={built[-1]}; its own wheel declares no torch) and the profile's torch is "
            f"{torch}: its compiled ops do not load{said}",
            f"pin torch {built[-1]} (frameworks.pytorch), or the {name} release the SGLang of torch {torch} pins",
            newest.cite() + trap))
    return out


def _flashinfer(ctx: CheckContext) -> str | None:
    """Who brings FlashInfer into the image: the profile's own line, or an engine's pin."""
    have = installed(ctx)
    if "flashinfer-python" in have:
        return have["flashinfer-python"].label
    return next((f"{item.label} (pins flashinfer-python=={v})" for item, row in pinned_engines(ctx, have)
                 for v in [row.pin("flashinfer-python", item.extras)] if v), None)


def jit_toolkit(ctx: CheckContext) -> list[Finding]:
    """FlashInfer compiles kernels at engine start with the image's own CUDA toolkit (a devel base): for the GPUs
    the trap row names, a toolkit older than its minimum fails engine start."""
    trap = next((t for t in ctx.kb.engine_traps if t.id == "engine-jit-toolkit"), None)
    base = ctx.base
    who = _flashinfer(ctx) if ctx.gpu else None
    if trap is None or trap.cc_major is None or trap.cuda_min is None or who is None or base is None:
        return []
    if base.flavor != "devel" or not base.cuda or vtuple(base.cuda)[:2] >= vtuple(trap.cuda_min)[:2]:
        return []
    hit = [t for t in ctx.targets if t.model is not None and vtuple(t.model.compute_capability)[0] == trap.cc_major]
    return [finding(
        "warning", "engine-jit-toolkit",
        f"{who} compiles FlashInfer kernels at engine start with the image's CUDA {base.cuda} toolkit, and "
        f"{target.label} needs CUDA {trap.cuda_min} or newer for that: \"{trap.failure}\"",
        f"use a CUDA {trap.cuda_min}+ devel base (nvidia/cuda:{trap.cuda_min}.x-...-devel)", trap.cite())
        for target in hit]


RULES = [flashinfer_cubin, sgl_kernel_torch, jit_toolkit]
