"""Small, pure helpers for dotted versions and compute capabilities."""

from __future__ import annotations

import functools
import re

_NUM = re.compile(r"\d+")


@functools.lru_cache(maxsize=4096)  # the rules compare the same few hundred KB versions over and over
def vtuple(version: str) -> tuple[int, ...]:
    """``"1.7.1+cu101"`` -> ``(1, 7, 1)``; a part's non-numeric tail is ignored ("2.2.0a0" -> (2, 2, 0))."""
    out: list[int] = []
    for part in version.split("+", 1)[0].split("."):
        m = _NUM.match(part)
        if not m:
            break
        out.append(int(m.group()))
    return tuple(out)


def minor(version: str) -> str:
    """``"12.1.1"`` -> ``"12.1"``."""
    return ".".join(str(p) for p in vtuple(version)[:2])


def major(version: str) -> int:
    return vtuple(version)[0]


def same_prefix(short: str, long: str) -> bool:
    """True when every component of ``short`` equals the matching one of ``long`` ("8.9" ~ "8.9.7")."""
    a, b = vtuple(short), vtuple(long)
    return len(a) <= len(b) and b[: len(a)] == a


def same_version(a: str, b: str) -> bool:
    """Equal as pip compares release numbers: trailing zeros do not count ("2.1" == "2.1.0")."""
    return _padded(vtuple(a), vtuple(b)) == _padded(vtuple(b), vtuple(a))


def at_least(version: str, minimum: str) -> bool | None:
    """``version >= minimum``; ``None`` when ``version`` is less precise than ``minimum`` and agrees with it as far
    as it goes, so the answer cannot be told ("8" against "8.6": a cuDNN 8 of unknown minor)."""
    v, m = vtuple(version), vtuple(minimum)
    if len(v) < len(m) and m[: len(v)] == v and any(m[len(v) :]):
        return None
    return _padded(v, m) >= _padded(m, v)


def _padded(parts: tuple[int, ...], other: tuple[int, ...]) -> tuple[int, ...]:
    return parts + (0,) * (len(other) - len(parts))


def cc_tuple(cc: str) -> tuple[int, int]:
    major_s, minor_s = cc.split(".")
    return int(major_s), int(minor_s)


def sm_to_cc(sm: str) -> tuple[int, int]:
    """``"sm_86"`` / ``"compute_86"`` / ``"sm_120"`` -> (8, 6) / (12, 0)."""
    digits = sm.split("_", 1)[1].rstrip("af")
    return int(digits[:-1]), int(digits[-1])


def cc_to_sm(cc: str) -> str:
    return "sm_" + cc.replace(".", "")


def in_range(version: str, low: str, high: str) -> bool:
    """Compare on the length of the bounds: python "3.7.9" is within "3.5".."3.7"."""
    v = vtuple(version)
    return vtuple(low) <= v[: len(vtuple(low))] and v[: len(vtuple(high))] <= vtuple(high)
