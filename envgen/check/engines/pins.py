"""Serving engines (vLLM, SGLang) named in ``packages.pip``: their own pins read from their wheels
(``engine_requires.yaml``) against the profile's torch and kernel packages, the CUDA build their PyPI wheel carries
against the base's and the torch's, and their Python window. Each finding cites the row and, from
``engine_traps.yaml``, how the engine's own tracker saw the chain fail."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.packages.installs import Installed, installed
from envgen.check.util import finding
from envgen.kb import KnowledgeBase
from envgen.kb.engines import ENGINES, EngineRequires
from envgen.kb.versions import vtuple

_TORCH_FAMILY = ("torch", "torchvision", "torchaudio", "xformers")


def trap_of(kb: KnowledgeBase, code: str) -> tuple[str, str]:
    """(': "the failure text"', '; engine_traps.yaml#code: source') of the trap row, or empty strings."""
    row = next((t for t in kb.engine_traps if t.id == code), None)
    return (f': "{row.failure}"', f"; {row.cite()}") if row is not None else ("", "")


def pinned_engines(ctx: CheckContext, have: dict[str, Installed]) -> list[tuple[Installed, EngineRequires]]:
    """The engines the profile pins exactly, with the row of that release."""
    out = []
    for name in ENGINES:
        item = have.get(name)
        row = ctx.kb.engine_row(name, item.version) if item is not None else None
        if item is not None and row is not None:
            out.append((item, row))
    return out


def torch_of(ctx: CheckContext, have: dict[str, Installed]) -> str | None:
    torch = have.get("torch")
    return torch.version if torch is not None else ctx.profile.torch_version


def _releases_pinning(kb: KnowledgeBase, engine: str, name: str, version: str) -> list[str]:
    """The newest three releases of ``engine`` that pin ``name==version`` exactly."""
    found = [r.version for r in kb.engine_requires if r.distribution == engine and version in r.pinned(name)]
    return sorted(found, key=vtuple)[-3:]


def _replaced(ctx: CheckContext, have: dict[str, Installed], item: Installed,
              row: EngineRequires) -> tuple[str, str, str] | None:
    """(name, the engine's pin, the profile's version) of the first of torch's family the engine pins to another
    release: torch first (its companions follow it), then torchvision, torchaudio, xformers."""
    for name in _TORCH_FAMILY:
        pin = row.pin(name, item.extras)
        mine = have.get(name) if name != "torch" else None
        current = mine.version if mine is not None else (torch_of(ctx, have) if name == "torch" else None)
        if pin is not None and current is not None and vtuple(current) != vtuple(pin):
            return name, pin, current
    return None


def replaces_torch(ctx: CheckContext) -> list[Finding]:
    """The engine pins torch (or torchvision, torchaudio, xformers) exactly, to another release than the
    profile's: installing it replaces the profile's (vLLM ignores the torch already installed)."""
    have = installed(ctx)
    out = []
    for item, row in pinned_engines(ctx, have):
        found = _replaced(ctx, have, item, row)
        if found is None:
            continue
        name, pin, current = found
        said, cite = trap_of(ctx.kb, "engine-replaces-torch")
        others = _releases_pinning(ctx.kb, item.name, name, current)
        where = "frameworks.pytorch" if name == "torch" else f"{name} (frameworks or packages.pip)"
        out.append(finding(
            "error", "engine-replaces-torch",
            f"{item.label} pins {name}=={pin} (its wheel's Requires-Dist) and the profile installs {name} "
            f"{current}: the engine's pin wins, pip uninstalls {current} and installs {pin}{said}",
            f"set {where} to {pin}, the release {item.name} {row.version} was built against"
            + (f"; or keep {name} {current} with {item.name} {' / '.join(others)} (they pin {name}=={current})"
               if others else ""),
            row.cite() + cite))
    return out


def _engine_builds(ctx: CheckContext) -> list[tuple[Installed, EngineRequires, int]]:
    """The pinned engines whose PyPI wheel names a CUDA build, with its major (GPU profiles only)."""
    if not ctx.gpu:
        return []
    return [(item, row, int(row.build[2:-1])) for item, row in pinned_engines(ctx, installed(ctx))
            if row.build and row.build.startswith("cu")]


def cuda_major(ctx: CheckContext) -> list[Finding]:
    """The CUDA build of the engine's PyPI wheel (its torch pin's) against the profile's torch build: a different
    major loads two CUDA runtimes into one process."""
    out = []
    variant, torch = ctx.torch_variant, torch_of(ctx, installed(ctx))
    for item, row, major in _engine_builds(ctx):
        if variant is None or not variant.cuda or vtuple(variant.cuda)[0] == major:
            continue
        if torch is None or vtuple(torch) != vtuple(row.pin("torch", item.extras) or torch):
            continue  # the engine replaces that torch (engine-replaces-torch says so)
        said, cite = trap_of(ctx.kb, "engine-cuda-major")
        out.append(finding(
            "error", "engine-cuda-major",
            f"{item.label}'s PyPI wheel is built for {row.build} ({row.build_from or 'its nvidia-* pins'}) and the "
            f"profile's torch is +{variant.tag} (CUDA {variant.cuda}): two CUDA runtimes in one process{said}",
            f"use the torch build the engine's wheel was built against ({row.build}), or an engine release "
            f"built for CUDA {vtuple(variant.cuda)[0]}", row.cite() + cite))
    return out


def base_cuda(ctx: CheckContext) -> list[Finding]:
    """The engine's CUDA major against the base image's: older, the engine's libraries are not there (error);
    newer, kernels the engine compiles at run time use the base's toolkit beside its own runtime (warning)."""
    out = []
    base = ctx.base.cuda if ctx.base is not None else None
    for item, row, major in _engine_builds(ctx):
        if not base or vtuple(base)[0] == major:
            continue
        older = vtuple(base)[0] < major
        said, cite = trap_of(ctx.kb, "engine-base-cuda" if older else "engine-cuda-major")
        out.append(finding(
            "error" if older else "warning", "engine-base-cuda",
            f"{item.label}'s PyPI wheel is built for {row.build} ({row.build_from or 'its nvidia-* pins'}) and the "
            f"base image carries CUDA {base}: "
            + ("the engine's CUDA libraries are not the base's" if older else
               "the engine's runtime and the base's toolkit are two CUDA majors in one process") + said,
            f"use a base image with CUDA {major} (an nvidia/cuda:{major}.x tag), or a {item.name} release built for "
            f"CUDA {vtuple(base)[0]}", row.cite() + cite))
    return out


def python_window(ctx: CheckContext) -> list[Finding]:
    """The profile's Python outside the engine release's Requires-Python (pip finds no such release)."""
    out = []
    python = ctx.profile.python_minor
    for item, row in pinned_engines(ctx, installed(ctx)):
        if python in row.python:
            continue
        said, cite = trap_of(ctx.kb, "engine-python")
        window = row.requires_python or "its wheel tags"
        out.append(finding(
            "error", "engine-python",
            f"{item.label} installs on CPython {', '.join(row.python)} (Requires-Python {window}), not on the "
            f"profile's Python {python}: pip finds no release to install{said}",
            f"use Python {row.python[-1]}, or a {item.name} release whose Requires-Python admits {python}",
            row.cite() + cite))
    return out


RULES = [replaces_torch, cuda_major, base_cuda, python_window]
