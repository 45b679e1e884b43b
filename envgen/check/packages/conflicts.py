"""The combined set as a rule: two distributions the image installs whose recorded Requires-Dist admit no common
release of a third (``check.packages.combined``): pip refuses the set. Exact pins that differ are ``pkg-pin-conflict``,
ranges that do not meet ``pkg-range-conflict``; both name the two requirements and the recorded releases that
would meet. A pin PyPI serves nothing of for the image's Python (``tensorflow[and-cuda]==2.15.0``'s
``tensorrt-libs==8.6.1``) is ``pkg-pin-unserved``."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.packages.combined import Conflict, conflicts, index_of, meeting, stated, unserved
from envgen.check.packages.installs import Installed, installed
from envgen.check.util import finding


def _ways(ctx: CheckContext, a: Installed, b: Installed) -> str:
    """"tensorflow 2.12.1 or 2.14.0 (with torch==2.6.0+cu124); torch 2.2.2 (with tensorflow==2.13.0)"."""
    python = ctx.profile.python_minor
    ways = []
    for moved, fixed in ((a, b), (b, a)):
        found = meeting(ctx.kb, moved, stated(ctx.kb, [fixed], python), python)
        if found:
            versions = " or ".join([found[0], *(f.split(" ", 1)[1] for f in found[1:])])
            ways.append(f"{versions} (with {fixed.label})")
    return "; ".join(ways) or "no recorded release of either meets the other"


def _finding(ctx: CheckContext, found: list[Conflict]) -> Finding:
    a, b = found[0].a.by, found[0].b.by
    ways = _ways(ctx, a, b)
    partial = [s for c in found for s in (c.a, c.b) if s.partial]
    note = (f" ({partial[0].by.label}: its release's requirements as recorded for the {partial[0].row.key} wheel, "
            "the CUDA build's own pins left out)") if partial else ""
    cite = "; ".join(dict.fromkeys(s.row.cite() for c in found for s in (c.a, c.b)))
    if all(c.exact for c in found):
        clash = "; ".join(f"{c.a.text} against {c.b.text}" for c in found)
        return finding(
            "error", "pkg-pin-conflict",
            f"{a.label} and {b.label} pin the same distributions exactly, to different versions ({clash}){note}: "
            "pip cannot install both (ResolutionImpossible)",
            f"releases that would meet: {ways}; or let one framework take the other's libraries (TensorFlow as "
            "`tensorflow`, without [and-cuda]: envgen's library rules then check the libraries fit), or build one "
            "image per framework", cite)
    clash = "; ".join(f"{c.a.said()} against {c.b.said()}" for c in found)
    names = ", ".join(c.name for c in found)
    return finding(
        "error", "pkg-range-conflict",
        f"{a.label} and {b.label} require {names} in ranges no release meets: {clash}{note}: pip refuses the set "
        "(ResolutionImpossible)",
        f"releases that would meet: {ways}; or build one image per framework", cite)


def unserved_pins(ctx: CheckContext) -> list[Finding]:
    """A distribution whose Requires-Dist pins a release PyPI serves nothing of for the image's Python."""
    have, python = installed(ctx), ctx.profile.python_minor
    said = stated(ctx.kb, have.values(), python)
    out = []
    for s, row in unserved(said, set(have), python, index_of(ctx.kb)):
        has = (f"PyPI has wheels of it for CPython {', '.join(row.pythons)} only, and no sdist" if row.pythons
               else "PyPI has no file of that release")
        ways = meeting(ctx.kb, s.by, [], python)
        out.append(finding(
            "error", "pkg-pin-unserved",
            f"{s.by.label} requires {s.said()}, and {has}: pip cannot install {s.by.label} on CPython {python}",
            f"releases that would install: {', '.join(ways) or 'none recorded'}; or another Python",
            f"{s.row.cite()}; {row.cite()}"))
    return out


def combined_set(ctx: CheckContext) -> list[Finding]:
    """One error per pair of installed distributions whose requirements on some name admit no release."""
    pairs: dict[tuple[str, str], list[Conflict]] = {}
    for c in conflicts(ctx.kb, installed(ctx).values(), ctx.profile.python_minor):
        pairs.setdefault((c.a.by.label, c.b.by.label), []).append(c)
    return [_finding(ctx, found) for found in pairs.values()]


RULES = [combined_set, unserved_pins]
