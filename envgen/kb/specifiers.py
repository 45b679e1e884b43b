"""PEP 440 version specifiers for release numbers, without importing ``packaging`` on check's path.

``packaging.specifiers`` costs ~35 ms to import, a tenth of `envgen check`'s whole budget; the specifiers the
knowledge base holds and the pins profiles carry need only release-number comparisons, so this module does
them (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``~=``, ``==X.*``, ``!=X.*``). A pre-release counts as its
release ("5.0.0dev" as 5.0.0), except in an exact pin of one (``==2.0.0.dev20221202`` is that release alone), and a
local label ("+cu121") is ignored; tests/unit/test_kb_specifiers.py checks the answers against ``packaging`` on
every specifier of the knowledge base.
"""

from __future__ import annotations

import re
from typing import Annotated

from envgen.kb.versions import vtuple
from envgen.records import Check

_CLAUSE = re.compile(r"^(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.*+!-]*)$")
_TAIL = re.compile(r"^[0-9]+(?:\.[0-9]+)*(.*)$")  # what follows the release numbers: "a1", ".dev20221202", ".post1"


def _valid(value: str) -> str:
    for clause in _clauses(value):
        if not _CLAUSE.match(clause):
            raise ValueError(f"{clause!r} is not a PEP 440 version clause such as '>=1.2' or '<2'")
    return value


Specifier = Annotated[str, Check(_valid)]


def _clauses(spec: str) -> list[str]:
    return [c.strip() for c in spec.split(",") if c.strip()]


def _pad(parts: tuple[int, ...], n: int) -> tuple[int, ...]:
    return parts + (0,) * (n - len(parts))


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = max(len(a), len(b))
    x, y = _pad(a, n), _pad(b, n)
    return (x > y) - (x < y)


def _clause_holds(version: str, op: str, target: str) -> bool:
    v = vtuple(version)
    if target.endswith(".*"):
        prefix = vtuple(target[:-2])
        same = _pad(v, len(prefix))[: len(prefix)] == prefix
        return same if op == "==" else not same
    t = vtuple(target)
    c = _cmp(v, t)
    if op in ("==", "===", "!="):
        # an exact pin of a pre-, dev- or post-release (``==2.0.0.dev20221202``) is that release alone
        same = c == 0 and (not _tail(target) or _tail(version) == _tail(target))
        return same if op != "!=" else not same
    if op == "<":
        return c < 0  # "<5.0.0dev" reads as "<5.0.0": no 5.0.0 pre-release is ever pinned next to it
    if op == "<=":
        return c <= 0
    if op == ">":
        return c > 0
    if op == ">=":
        return c >= 0
    # ~=X.Y.Z: >= X.Y.Z and == X.Y.*
    return c >= 0 and _pad(v, len(t))[: len(t) - 1] == t[:-1]


def contains(spec: str, version: str) -> bool:
    """Does ``version`` satisfy every clause of ``spec``? An empty specifier admits every version."""
    for clause in _clauses(spec):
        m = _CLAUSE.match(clause)
        if m is None or not _clause_holds(version, m.group(1), m.group(2)):
            return False
    return True


def exact(spec: str) -> str | None:
    """The version an ``==X.Y.Z`` specifier (one clause, no wildcard) pins, else None."""
    clauses = _clauses(spec)
    if len(clauses) == 1 and clauses[0].startswith("==") and not clauses[0].endswith("*"):
        return clauses[0].lstrip("=").strip()
    return None


def _tail(version: str) -> str:
    """The pre-, dev- or post-release part of ``version``, normalised ("2.0.0.dev20221202" -> "dev20221202",
    "1.0rc1" -> "rc1"); "" for a final release (a local label such as "+cu121" is no part of it)."""
    found = _TAIL.match(version.split("+", 1)[0].lower())
    return re.sub(r"[._-]", "", found.group(1)) if found else ""


def _boundaries(spec: str) -> set[tuple[int, ...]]:
    """The release numbers where ``spec`` can change its answer: each clause's version, the upper end of a
    ``~=`` or ``==X.*`` clause."""
    out: set[tuple[int, ...]] = set()
    for clause in _clauses(spec):
        m = _CLAUSE.match(clause)
        if m is None:
            continue
        op, target = m.group(1), m.group(2)
        t = vtuple(target[:-2] if target.endswith(".*") else target)
        if not t:
            continue
        out.add(t)
        if target.endswith(".*"):
            out.add(t[:-1] + (t[-1] + 1,))
        elif op == "~=" and len(t) > 1:
            out.add(t[:-2] + (t[-2] + 1,))
    return out


def _below(t: tuple[int, ...]) -> tuple[int, ...] | None:
    """A release just below ``t`` (above every release that is below it in practice): (2, 0, 0) -> (1, 99999)."""
    parts = list(t)
    while parts and parts[-1] == 0:
        parts.pop()
    if not parts:
        return None
    return (*parts[:-1], parts[-1] - 1, 99999)


def _probes(*specs: str) -> list[str]:
    """Versions that stand for every stretch between the specifiers' boundaries: each boundary, a release just
    below and just above it, one below all and one above all."""
    points: set[tuple[int, ...]] = {(0,), (99999,)}
    for t in set().union(*(_boundaries(s) for s in specs)):
        points |= {t, (*t, 0, 0, 0, 0, 1)}
        below = _below(t)
        if below is not None:
            points.add(below)
    return [".".join(map(str, p)) for p in sorted(points)]


def overlaps(a: str, b: str) -> bool:
    """Does some release satisfy both specifiers? (``>=1.20`` and ``>=2.0``: yes; ``<2`` and ``>=2.0``: no.)"""
    return any(contains(a, v) and contains(b, v) for v in _probes(a, b))


def within(a: str, b: str) -> bool:
    """Does every release ``a`` admits satisfy ``b`` too? (``>=2.1`` within ``>=2.0``: yes; ``>=1.20``: no.) An
    ``a`` that admits nothing is within anything."""
    return all(contains(b, v) for v in _probes(a, b) if contains(a, v))
