"""What a python_packages.yaml row says about a witness trial, and where its recorded trials put the boundaries:
pure functions, shared by the refresh tool (``tools.kbrefresh.witness``) and the test that replays the
recorded witnesses against the rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from packaging.utils import canonicalize_name
from packaging.version import Version

from envgen.kb.pypackages import PackageBreak, Side, Trial
from envgen.kb.specifiers import contains
from envgen.kb.versions import minor

# the results that count as the row holding: a ceiling is pip refusing the pair (or an old wheel breaking)
HOLDING = {"runtime": {"breaks"}, "notice": {"breaks"}, "ceiling": {"refused", "breaks"}}


def _pinned(side: Side, pins: dict[str, str]) -> tuple[str, str] | None:
    return next(((n, pins[n]) for n in side.names if n in pins), None)


def _pins(trial: Trial) -> dict[str, str]:
    return {canonicalize_name(k): v for k, v in trial.pins().items()}


def _other_holds(row: PackageBreak, pins: dict[str, str]) -> bool:
    """Whether the trial's `other` side is inside the row (a side the trial does not pin counts as inside)."""
    if row.other is None:
        return True
    pinned = _pinned(row.other, pins)
    if row.other_absent:
        return pinned is None
    if pinned is None:
        return True
    if row.same_series:
        own = _pinned(row.package, pins)
        return own is None or minor(own[1]) != minor(pinned[1])
    return contains(row.other.versions, pinned[1])


def _package_holds(row: PackageBreak, pins: dict[str, str]) -> bool:
    pinned = _pinned(row.package, pins)
    return pinned is None or contains(row.package.versions, pinned[1])


def holds(row: PackageBreak, trial: Trial) -> bool:
    """Whether the row claims the break for the versions the trial puts in place."""
    pins = _pins(trial)
    return _package_holds(row, pins) and _other_holds(row, pins)


def agrees(row: PackageBreak, trial: Trial, result: str) -> bool:
    """Whether a trial's observed ``result`` is what the row says about its versions (``installs``, a resolution
    only, says the metadata allows the pair: what a runtime row claims, what a ceiling denies)."""
    if result == "installs":
        return row.kind != "ceiling" or not holds(row, trial)
    return holds(row, trial) == (result in HOLDING[row.kind])


class Boundary(NamedTuple):
    """Two releases of one distribution the trials put on either side of a boundary."""

    name: str
    inside: str  # the release the break holds for (the last that breaks, or the first, from below)
    outside: str  # its neighbour it does not hold for


def boundaries(row: PackageBreak, results: list[tuple[Trial, str]]) -> list[Boundary]:
    """Adjacent tried releases of one distribution whose observed results differ, the rest of the pair held."""
    out: list[Boundary] = []
    sides: list[tuple[Side, Callable[[dict[str, str]], bool]]] = [(row.package, lambda p: _other_holds(row, p))]
    if row.other is not None and not row.other_absent and not row.same_series:
        sides.append((row.other, lambda p: _package_holds(row, p)))
    for side, rest_holds in sides:
        seen: dict[tuple[str, str], bool] = {}
        for trial, result in results:
            pins = _pins(trial)
            pinned = _pinned(side, pins)
            if result == "installs" and row.kind != "ceiling":
                continue  # a resolution says nothing of a runtime break
            if pinned is not None and rest_holds(pins):
                seen[pinned] = result in HOLDING[row.kind]
        for name in sorted({n for n, _ in seen}):
            tried = sorted(((Version(v), inside) for (n, v), inside in seen.items() if n == name))
            for (low, low_in), (high, high_in) in zip(tried, tried[1:], strict=False):
                if low_in != high_in:
                    inside, outside = (low, high) if low_in else (high, low)
                    out.append(Boundary(name, str(inside), str(outside)))
    return out


def releases_between(releases: dict[str, list[dict[str, object]]], low: str, high: str) -> list[str]:
    """The final, not yanked releases (with files) PyPI lists strictly between two versions."""
    a, b = sorted((Version(low), Version(high)))
    out = []
    for text, files in releases.items():
        try:
            version = Version(text)
        except ValueError:
            continue
        live = [f for f in files if not f.get("yanked")]
        if live and a < version < b and not version.is_prerelease and not version.is_devrelease:
            out.append(str(version))
    return sorted(out, key=Version)
