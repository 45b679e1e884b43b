"""CUDA shipped twice: the same CUDA library families arrive from a CUDA base image and from NVIDIA's pip wheels,
or from two wheels each with its own copy in its own directory. Only one copy is loaded; the other is megabytes
every pull carries. The megabytes are the wheels' download sizes as PyPI serves them (``nvidia_wheel_files.yaml``,
recorded by ``tools.kbrefresh.wheel_sizes``); the base's copy has no recorded size, so it is not counted."""

from __future__ import annotations

from collections import defaultdict

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.plan.libraries import BASE, Provider

SOURCE = "cuda_libraries.yaml, nvidia_wheel_files.yaml"
REFRESH = "python -m tools.kbrefresh.wheel_sizes"


def _sizes(ctx: CheckContext, wheels: list[Provider]) -> tuple[int, list[str]]:
    """(the bytes of the wheels whose files the KB records, the name==version of those it does not)."""
    total, unknown, counted = 0, [], set()
    for name, version in sorted({(p.distribution or "", _pinned(ctx, p) or "") for p in wheels}):
        files = [row.size for row in ctx.kb.nvidia_wheel_files if row.name == name and row.version == version]
        if files:
            total += max(files)  # manylinux1 and manylinux2014 files of one release differ by bytes
            counted.add(name)
        else:
            unknown.append(f"{name}=={version}" if version else name)
    return total, [u for u in unknown if u.split("==")[0] not in counted]


def _megabytes(ctx: CheckContext, wheels: list[Provider]) -> str:
    total, unknown = _sizes(ctx, wheels)
    text = f"{total / 1e6:.0f} MB of wheels to download" if total else "wheels of no recorded size"
    return text + (f"; not counted, no recorded size or pin: {', '.join(unknown)} ({REFRESH} records a pin's files)"
                   if unknown else "")


def _plain_base(ctx: CheckContext) -> str:
    info = ctx.base
    row = ctx.kb.os_image(info.os) if info is not None and info.os else None
    return row.key if row is not None else "a plain OS image"


def _base_fix(ctx: CheckContext, wheels: list[Provider], base_major: int | None) -> str:
    majors = {n.cuda_major for n in ctx.libraries.needs}
    named = sorted({p.distribution or "" for p in wheels if p.origin.startswith("pip ")})
    pulled = sorted({p.distribution or "" for p in wheels if not p.origin.startswith("pip ")})
    if pulled or (majors and base_major not in majors):
        loaded = f"CUDA {'/'.join(str(m) for m in sorted(majors))}" if majors else "the wheels'"
        return (f"build FROM {_plain_base(ctx)} with the wheels: the frameworks load the {loaded} copies, "
                "the base's are never loaded")
    return (f"drop {', '.join(named)} from packages.pip: the base image's CUDA {base_major} libraries serve the "
            "frameworks (or keep the wheels on a plain base)")


def _planned(ctx: CheckContext, families: list[str]) -> str:
    """What the plan did about ``families`` (its "CUDA once" notes, plan.cuda_once), or "" when it chose nothing."""
    said = [n.removeprefix("CUDA once: ") for n in ctx.plan.notes
            if n.startswith("CUDA once: ") and any(f in n.split(" arrive twice")[0].split(", ") for f in families)]
    return f"; the plan: {'; '.join(said)}" if said else ""


def cuda_twice(ctx: CheckContext) -> list[Finding]:
    found = ctx.libraries.providers
    base = [p for p in found if p.stage == BASE]
    wheels = [p for p in found if p.distribution]
    out: list[Finding] = []
    both = sorted({p.family for p in base} & {p.family for p in wheels})
    if both:
        extra = [p for p in wheels if p.family in both]
        base_major = base[0].cuda_major
        out.append(finding(
            "warning", "cuda-twice",
            f"the CUDA libraries {', '.join(both)} arrive twice: from base image {ctx.profile.base} (CUDA "
            f"{base[0].version}) and from {', '.join(sorted({p.distribution or '' for p in extra}))} "
            f"({_megabytes(ctx, extra)}); a process loads one copy, every pull carries both{_planned(ctx, both)}",
            _base_fix(ctx, extra, base_major), SOURCE))
    out += _wheels_twice(ctx, [p for p in wheels if p.family not in both])
    return out


def _wheels_twice(ctx: CheckContext, wheels: list[Provider]) -> list[Finding]:
    """Two distributions of one family in different directories (one directory is ``lib-clash``'s)."""
    groups: dict[str, list[Provider]] = defaultdict(list)
    for p in wheels:
        groups[p.family].append(p)
    twice = {f: ps for f, ps in groups.items()
             if len({p.distribution for p in ps}) > 1 and len({p.directory for p in ps}) > 1}
    if not twice:
        return []
    extra = [p for ps in twice.values() for p in ps]
    loaded = {n.cuda_major for n in ctx.libraries.needs if n.family in twice}
    if len(loaded) == 1:
        major = loaded.pop()
        unused = sorted({p.distribution or "" for p in extra if p.cuda_major != major})
        fix = f"drop {', '.join(unused)}: the frameworks load the CUDA {major} copies"
    else:
        fix = "pin the frameworks to one CUDA major and keep one wheel per library"
    return [finding(
        "warning", "cuda-twice",
        f"the CUDA libraries {', '.join(sorted(twice))} arrive twice, from "
        f"{', '.join(sorted({p.distribution or '' for p in extra}))} ({_megabytes(ctx, extra)})"
        f"{_planned(ctx, sorted(twice))}", fix, SOURCE)]


RULES = (cuda_twice,)


def _pinned(ctx: CheckContext, p: Provider) -> str | None:
    """The wheel version a provider installs: the profile's pin, else its framework's Requires-Dist pin."""
    if p.origin.startswith("pip "):
        return p.version
    rows = []
    if ctx.torch_release is not None:
        rows.append(ctx.kb.requires_of("torch", ctx.torch_release.version,
                                       ctx.torch_variant.tag if ctx.torch_variant else None))
    if ctx.tf_package and ctx.profile.frameworks.tensorflow:
        rows.append(ctx.kb.requires_of(ctx.tf_package.split("[")[0], ctx.profile.frameworks.tensorflow))
    for row in rows:
        for req in row.requires if row is not None else ():
            if req.name == p.distribution and req.spec.startswith("==") and "," not in req.spec:
                return req.spec[2:]
    return None
