"""Ranges, not only pins: every pair of requirements the set places on one distribution — a pinned release's
Requires-Dist (its own metadata, read from the index) against another's, or against a packages.pip line — is
intersected over the distribution's releases on the index. An empty intersection is pip's ResolutionImpossible at
build time: an error naming both requirements and the releases that would meet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from envgen.check import Finding
from envgen.check.util import finding
from envgen.lock.releases import Target, nearest_order
from envgen.pypi import Index, IndexUnreachable, canonical

MEET_READS = 32  # releases of one requirer read, nearest first, to find one that meets
_BATCH = 8  # read at once


@dataclass(frozen=True)
class Asker:
    """Something in the set that asks for distributions: a pinned release (its Requires-Dist) or a packages.pip
    line (its own requirement)."""

    label: str  # "flask==1.1.4" or "packages.pip[2] 'numpy<2'"
    name: str  # canonical
    version: str | None  # the pinned release; None for a line
    extras: tuple[str, ...]
    requires: tuple[Any, ...]  # packaging Requirement, the image's markers holding
    source: str


def environment(python: str, extra: str = "") -> dict[str, str]:
    """The marker environment of the image: CPython ``python`` on Linux x86-64."""
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": extra}


def holding(lines: Sequence[str], python: str, extras: Sequence[str]) -> tuple[Any, ...]:
    """The Requires-Dist ``lines`` whose marker holds in the image with ``extras`` asked for."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for text in lines:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is None or any(req.marker.evaluate(environment(python, e)) for e in ("", *extras)):
            out.append(req)
    return tuple(out)


def release_asker(index: Index, target: Target, name: str, version: str, extras: Sequence[str],
                  label: str) -> Asker | None:
    files = index.release(name, version)
    meta = index.metadata(name, version, files, target.tags) if files else None
    if meta is None:
        return None
    return Asker(label, canonical(name), version, tuple(extras), holding(meta.requires_dist, target.python, extras),
                 meta.source)


def _versions(index: Index, name: str) -> list[Any]:
    from packaging.version import InvalidVersion, Version

    out = []
    for v in index.releases(name):
        try:
            out.append(Version(v))
        except InvalidVersion:
            continue
    return out


def _meets(versions: Sequence[Any], a: Any, b: Any) -> bool:
    return any(a.specifier.contains(v) and b.specifier.contains(v) for v in versions)


def clashes(index: Index, target: Target, askers: Sequence[Asker]) -> list[Finding]:
    """An error for every pair of requirements on one distribution that no release of it meets."""
    wants: dict[str, list[tuple[Asker, Any]]] = {}
    for asker in askers:
        for req in asker.requires:
            wants.setdefault(canonical(req.name), []).append((asker, req))
    out = []
    for dist, asks in sorted(wants.items()):
        if len({a.label for a, _ in asks}) < 2 or all(not r.specifier for _, r in asks):
            continue
        try:
            versions = _versions(index, dist)
        except IndexUnreachable:
            continue
        for (a, ra), (b, rb) in combinations(asks, 2):
            if a.label != b.label and versions and not _meets(versions, ra, rb):
                out.append(_clash(index, target, dist, versions, (a, ra), (b, rb)))
    return out


def _clash(index: Index, target: Target, dist: str, versions: Sequence[Any], one: tuple[Asker, Any],
           other: tuple[Asker, Any]) -> Finding:
    (a, ra), (b, rb) = one, other
    ways = [w for w in (_way(index, target, dist, versions, a, rb), _way(index, target, dist, versions, b, ra)) if w]
    fix = ("releases that would meet: " + "; or ".join(ways)) if ways else \
        f"drop one of the two, or ask the projects: no nearby release of either meets the other's {dist} range"
    return finding("error", "pkg-requires-clash",
                   f"{a.label} requires {ra} and {b.label} requires {rb}: no release of {dist} is in both ranges "
                   "(pip stops with ResolutionImpossible at build time)", fix, f"{a.source}; {b.source}")


def _way(index: Index, target: Target, dist: str, versions: Sequence[Any], asker: Asker, other: Any) -> str | None:
    """Another release of ``asker`` whose own requirement on ``dist`` meets ``other`` (a packages.pip line: the
    newest release of ``dist`` inside ``other``)."""
    if asker.version is None or asker.name == dist:
        inside = sorted(v for v in versions if other.specifier.contains(v))
        return f"{dist}=={inside[-1]} (inside {other})" if inside else None
    releases = index.releases(asker.name)
    candidates = [v for v in nearest_order(index, asker.name, asker.version) if target.installs(releases[v])]
    candidates = candidates[:MEET_READS]

    def meets(version: str) -> bool:
        meta = index.metadata(asker.name, version, releases[version], target.tags)
        if meta is None:  # unread: not offered as a way out
            return False
        asks = [r for r in holding(meta.requires_dist, target.python, asker.extras) if canonical(r.name) == dist]
        return all(_meets(versions, r, other) for r in asks)

    from concurrent.futures import ThreadPoolExecutor

    near = None
    try:
        with ThreadPoolExecutor(max_workers=_BATCH) as pool:  # the reads are the index's latency, not CPU
            for start in range(0, len(candidates), _BATCH):  # nearest batch first; stop at the first that meets
                batch = candidates[start:start + _BATCH]
                near = next((v for v, yes in zip(batch, pool.map(meets, batch), strict=True) if yes), None)
                if near:
                    break
    except IndexUnreachable:
        return None
    return f"{asker.name}=={near} (with {other})" if near else None
