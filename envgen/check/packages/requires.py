"""The Python-package layer: pairs that install yet break when used, limits the metadata states
(``python_packages.yaml``), the frameworks' own Requires-Dist (``framework_requires.yaml``) against the
profile's pins. Two distributions whose requirements on a third disagree: ``packages.conflicts``."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding, Severity
from envgen.check.packages.combined import read
from envgen.check.packages.installs import Floating, Installed, floating, installed
from envgen.check.util import finding
from envgen.kb.pypackages import FrameworkRequires, PackageBreak, Requirement, Side
from envgen.kb.specifiers import contains, overlaps, within
from envgen.kb.versions import minor, vtuple

_SEVERITY: dict[str, Severity] = {"runtime": "error", "ceiling": "error", "notice": "info"}


def _side(have: dict[str, Installed], names: list[str], versions: str) -> Installed | None:
    return next((have[n] for n in names if n in have and contains(versions, have[n].version)), None)


Held = tuple[Installed, Installed | None]
Stated = list[tuple[Installed, FrameworkRequires, list[Requirement]]]


def _holds(row: PackageBreak, have: dict[str, Installed], env: dict[str, str]) -> Held | None:
    """(the package, the other or None when the break is its absence) when ``row`` holds for the profile."""
    pkg = _side(have, row.package.names, row.package.versions)
    if pkg is None or any(env.get(k) != v for k, v in row.env.items()):
        return None
    if row.other is None:
        return pkg, None
    others = [have[n] for n in row.other.names if n in have]
    if row.other_absent:
        return (pkg, None) if not others else None
    if row.same_series:
        other = next((o for o in others if minor(o.version) != minor(pkg.version)), None)
    else:
        other = next((o for o in others if contains(row.other.versions, o.version)), None)
    return (pkg, other) if other is not None else None


def _break_finding(row: PackageBreak, pkg: Installed, other: Installed | None) -> Finding:
    pair = f"{pkg.label} ({pkg.origin})" + (f" with {other.label} ({other.origin})" if other else "")
    if row.other_absent and row.other is not None:
        pair += f" without {' or '.join(row.other.names)}"
    what = {"runtime": "installs (the metadata allows it), but {} fails",
            "ceiling": "crosses a limit the packages state ({})",
            "notice": "changes how {} behaves"}[row.kind].format(row.shows)
    return finding(_SEVERITY[row.kind], f"pkg-{row.kind}", f"{pair} {what}: \"{row.error}\"", row.fix, row.cite())


def _unpinned_finding(row: PackageBreak, pkg: Installed) -> Finding:
    assert row.other is not None
    names = " or ".join(row.other.names)
    assert row.unpinned is not None
    return finding("warning", "pkg-unpinned",
                   f"{pkg.label} ({pkg.origin}) breaks with {names} {row.other.versions}, and {names} is not "
                   f"pinned: pip installs its newest release (inside that range) wherever something pulls it in, "
                   f"and then {row.shows} fails: \"{row.error}\"", f"pin {row.unpinned.pin}; {row.fix}", row.cite())


def _unpinned(ctx: CheckContext, have: dict[str, Installed]) -> list[tuple[PackageBreak, Installed]]:
    """Rows whose `other` the profile leaves out, where pip's newest choice falls into the break (a line of the
    profile that names `other` with a range is judged by ``range_breaks``). Not on a base that carries a Python
    environment (NGC, base_provides): pip keeps the numpy it finds there when it fits."""
    if ctx.ngc is not None or ctx.profile.base_frameworks:
        return []
    named = set(have) | set(floating(ctx))
    out = []
    python = vtuple(ctx.profile.python_minor)
    for row in ctx.kb.package_breaks:
        if row.unpinned is None or row.other is None or python < vtuple(row.unpinned.python_min):
            continue
        pkg = _side(have, row.package.names, row.package.versions)
        if pkg is not None and not any(n in named for n in row.other.names) and not _capped(ctx, have, row.other):
            out.append((row, pkg))
    return out


def package_breaks(ctx: CheckContext) -> list[Finding]:
    have, env = installed(ctx), dict(ctx.profile.env)
    out = []
    for row in ctx.kb.package_breaks:
        held = _holds(row, have, env)
        if held is not None:
            out.append(_break_finding(row, *held))
    return out + [_unpinned_finding(row, pkg) for row, pkg in _unpinned(ctx, have)] + range_breaks(ctx, have, env)


Pick = tuple["Installed | Floating", bool]  # what holds a side, and whether every release it allows is in the break


def _pick(have: dict[str, Installed], floats: dict[str, Floating], side: Side) -> Pick | None:
    pinned = _side(have, side.names, side.versions)
    if pinned is not None:
        return pinned, True
    for name in side.names:
        line = floats.get(name)
        if line is not None and overlaps(line.spec, side.versions):
            return line, within(line.spec, side.versions)
    return None


def _range_finding(row: PackageBreak, picks: list[tuple[Pick, Side]], all_in: bool) -> Finding:
    def said(item: Installed | Floating) -> str:
        unpinned = ", unpinned" if isinstance(item, Floating) and not item.spec else ""
        return f"{item.label} ({item.origin}{unpinned})"

    lines = [(item, sure, side) for (item, sure), side in picks if isinstance(item, Floating)]
    fixed = [said(item) for (item, _), _ in picks if not isinstance(item, Floating)]
    with_ = f" with {' and '.join(fixed)}" if fixed else ""
    if all_in:
        head = " and ".join(f"{said(item)} allows only {' or '.join(side.names)} {side.versions}" for item, _, side
                            in lines)
        what = f"{head}{with_}, and there {row.shows} fails"
        return finding(_SEVERITY[row.kind], f"pkg-{row.kind}", f"{what}: \"{row.error}\"", row.fix, row.cite())
    head = " and ".join(f"{said(item)} allows {' or '.join(side.names)} {side.versions}" for item, _, side in lines)
    # the pin once: the row's own fix often names it already
    example = row.unpinned.pin if row.unpinned and row.unpinned.pin not in row.fix else None
    narrow = f"narrow the range to leave the break out{f' (such as {example})' if example else ''}, or "
    return finding("warning", "pkg-range-allows",
                   f"{head}, which breaks{with_}: pip may take such a release, and then {row.shows} fails: "
                   f"\"{row.error}\"", narrow + row.fix, row.cite())


def range_breaks(ctx: CheckContext, have: dict[str, Installed], env: dict[str, str]) -> list[Finding]:
    """A break a floating packages.pip line may walk into: a warning when the line allows a broken release, the
    row's own finding when it allows only broken ones. Not where a framework's metadata keeps pip out of the
    range (TensorFlow's numpy<2)."""
    floats = floating(ctx)
    if not floats:
        return []
    out = []
    for row in ctx.kb.package_breaks:
        if row.same_series or row.kind == "notice" or any(env.get(k) != v for k, v in row.env.items()):
            continue
        pkg = _pick(have, floats, row.package)
        if pkg is None:
            continue
        picks = [(pkg, row.package)]
        if row.other is not None:
            other_named = any(n in have or n in floats for n in row.other.names)
            if row.other_absent:
                if other_named:
                    continue
            else:
                other = _pick(have, floats, row.other)
                if other is None:
                    continue
                picks.append((other, row.other))
        if not any(isinstance(item, Floating) for (item, _), _ in picks):
            continue  # every side pinned: package_breaks reports it
        all_in = all(sure for (_, sure), _ in picks)
        # a possible break needs every other side fixed (two floating sides: the resolver picks a pair, newest
        # first), and no ceiling (pip keeps out of a limit the metadata states)
        if not all_in and (sum(not sure for (_, sure), _ in picks) > 1 or row.kind == "ceiling"):
            continue
        if not all_in and any(isinstance(item, Floating) and _capped(ctx, have, side) for (item, _), side in picks):
            continue
        out.append(_range_finding(row, picks, all_in))
    return out


def safe_pins(ctx: CheckContext) -> list[tuple[str, PackageBreak]]:
    """The pins (``numpy==1.26.4``) that keep pip out of the breaks an unpinned package would walk into, with the
    row each rests on: what `envgen suggest` adds to the profiles it writes."""
    out: dict[str, tuple[str, PackageBreak]] = {}
    for row, _ in _unpinned(ctx, installed(ctx)):
        assert row.unpinned is not None
        out.setdefault(row.unpinned.pin.split("==")[0], (row.unpinned.pin, row))
    return list(out.values())


def _capped(ctx: CheckContext, have: dict[str, Installed], other: Side) -> bool:
    """True when an installed framework's own metadata keeps pip below ``other``'s range (TensorFlow's
    numpy<2.0.0 against a break from numpy>=2.0.0): the newest release is then not what pip installs."""
    clauses = [c.strip() for c in other.versions.split(",")]
    lows = [vtuple(c[2:]) for c in clauses if c.startswith(">=")]
    if not lows:
        return False
    for _, _, reqs in _requires(ctx, have):
        for req in reqs:
            if req.name in other.names:
                for clause in (c.strip() for c in req.spec.split(",")):
                    if clause.startswith("<") and not clause.startswith("<=") and vtuple(clause[1:]) <= lows[0]:
                        return True
    return False


def _reported(ctx: CheckContext, have: dict[str, Installed]) -> set[tuple[str, str]]:
    """(package, other) names a python_packages row already reports: its text says more than a range does."""
    env = dict(ctx.profile.env)
    return {(pkg.name, other.name) for row in ctx.kb.package_breaks
            for held in [_holds(row, have, env)] if held is not None and held[1] is not None
            for pkg, other in [held] if other is not None}


def _requires(ctx: CheckContext, have: dict[str, Installed]) -> Stated:
    """Each installed distribution with a recorded Requires-Dist, its row and the requirements that hold
    (``check.packages.combined``: a torch build not recorded keeps its release's requirements, not another build's
    pins)."""
    out = []
    for item in have.values():
        found = read(ctx.kb, item, ctx.profile.python_minor)
        if found is not None:
            out.append((item, found[0], [s.req for s in found[1]]))
    return out


def framework_requires(ctx: CheckContext) -> list[Finding]:
    """A pin of the profile outside the range a framework's own metadata declares for it, or a range that allows no
    release inside it."""
    have = installed(ctx)
    reported = _reported(ctx, have)
    floats = floating(ctx)
    out = []
    for item, row, reqs in _requires(ctx, have):
        for req in reqs:
            line = floats.get(req.name)
            if line is not None and req.spec and not overlaps(line.spec, req.spec):
                out.append(finding(
                    "error", "pkg-requires-conflict",
                    f"{item.label} declares {req.name}{req.spec} ({row.read_from} Requires-Dist"
                    f"{', extra ' + req.extra if req.extra else ''}) but the profile's {line.label} ({line.origin}) "
                    f"allows no release inside it: pip refuses the pair (ResolutionImpossible)",
                    f"write a range that meets {req.spec}, or drop the line and let pip choose", row.cite()))
                continue
            pin = have.get(req.name)
            if pin is None or pin.name == item.name or (item.name, pin.name) in reported:
                continue
            if not contains(req.spec, pin.version):
                out.append(finding(
                    "error", "pkg-requires-conflict",
                    f"{item.label} declares {req.name}{req.spec} ({row.read_from} Requires-Dist"
                    f"{', extra ' + req.extra if req.extra else ''}) but the profile pins {pin.label} "
                    f"({pin.origin}): pip refuses the pair (ResolutionImpossible)",
                    f"pin {req.name} to a release that satisfies {req.spec}, or drop the pin and let pip choose",
                    row.cite()))
    return out


RULES = [package_breaks, framework_requires]
