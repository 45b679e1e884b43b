"""A lock on a base that holds distributions (base_provides: its frameworks and base_provides.packages, the plan's
``ImagePlan.base_held``): every resolution is constrained to the base's versions, so a lock never pins another
version of one; what the base holds is left out of the install sets (it is not installed); and a resolution the
constraints make impossible is refused in one line naming the packages.pip line, the distribution and both
versions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from envgen.errors import BuildFailed, InputError
from envgen.kb.extensions import satisfies
from envgen.plan.lockfile import LockEntry
from envgen.plan.requirements import base_conflict

# (pins, constraints) -> the resolved set by name; raises BuildFailed when the resolver cannot resolve
Resolver = Callable[[list[str], Sequence[str]], dict[str, LockEntry]]


def held_resolution(resolver: Resolver, held: Mapping[str, str],
                    origins: Mapping[str, str]) -> Callable[[list[str]], dict[str, LockEntry]]:
    """``resolver`` constrained to ``held`` (name -> the base's version), the held distributions dropped from what
    it gives; a failure that a line's need for another version explains is that line's refusal (``origins``:
    packages.pip line -> where it was written)."""
    constraints = [f"{name}=={version}" for name, version in held.items()]

    def resolved(pins: list[str]) -> dict[str, LockEntry]:
        try:
            found = resolver(pins, constraints)
        except BuildFailed:
            refuse_conflict(resolver, pins, held, origins)
            raise
        return {name: entry for name, entry in found.items() if name not in held}

    return resolved


def refuse_conflict(resolver: Resolver, pins: Sequence[str], held: Mapping[str, str],
                    origins: Mapping[str, str]) -> None:
    """Raise InputError for the first packages.pip line of ``pins`` that cannot resolve alone under the base's
    versions and, unconstrained, resolves to another version of one of them; return when none does (the
    failure has another cause, and the caller raises it)."""
    constraints = [f"{name}=={version}" for name, version in held.items()]
    for spec in pins:
        if spec not in origins or _resolves(resolver, [spec], constraints):
            continue
        alone = _resolves(resolver, [spec], ())
        for name, version in held.items():
            got = (alone or {}).get(name)
            if got is not None and not satisfies(got.version, f"=={version}"):
                message, fix = base_conflict(name, version, f"{origins[spec]} {spec!r} resolves to {name} "
                                                            f"{got.version}")
                raise InputError(message, fix=fix)


def _resolves(resolver: Resolver, pins: list[str], constraints: Sequence[str]) -> dict[str, LockEntry] | None:
    try:
        return resolver(pins, constraints)
    except BuildFailed:
        return None
