"""Conda match specs read into one form (``CondaSpec``), and a framework release chosen for a range."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from envgen.kb.specifiers import contains
from envgen.kb.versions import vtuple

_CONDA = re.compile(r"^(?:([A-Za-z0-9_./:-]+)::)?([A-Za-z0-9_.-]+)\s*(.*)$")


@dataclass(frozen=True)
class CondaSpec:
    """``numpy=1.26.4`` (exact: conda's ``=`` with a full version), ``numpy=1.26`` / ``numpy 1.26.*`` (fuzzy: a
    prefix), ``numpy>=1.24,<2`` (range), ``numpy`` (any)."""

    name: str
    kind: Literal["exact", "fuzzy", "range", "any"]
    version: str  # the version (exact, fuzzy: without ".*"), or the PEP 440 specifier (range)
    build: str = ""

    def pip_line(self, name: str) -> str:
        """The requirements.txt line of this spec for the PyPI distribution ``name``."""
        return {"exact": f"{name}=={self.version}", "fuzzy": f"{name}=={self.version}.*",
                "range": f"{name}{self.version}", "any": name}[self.kind]

    def specifier(self) -> str:
        return "" if self.kind == "any" else self.pip_line("")

    def conda_pin(self) -> str | None:
        """``name=version[=build]`` (a packages.conda entry), or None for a range or an unpinned spec."""
        if self.kind not in ("exact", "fuzzy"):
            return None
        return f"{self.name}={self.version}" + (f"={self.build}" if self.build else "")


def read_conda_spec(text: str) -> CondaSpec | None:
    m = _CONDA.match(text.strip())
    if m is None:
        return None
    name, rest = m.group(2).lower(), m.group(3).strip()
    if not rest:
        return CondaSpec(name, "any", "")
    if rest.startswith("=="):
        return CondaSpec(name, "exact", rest[2:].strip())
    if rest[0] in "<>!~":
        return CondaSpec(name, "range", rest.replace(" ", ""))
    version, _, build = rest.lstrip("=").strip().replace(" ", "=", 1).partition("=")
    if version.endswith(".*"):
        return CondaSpec(name, "fuzzy", version[:-2], build)
    if "*" in version or not re.match(r"^[0-9][0-9A-Za-z.+_-]*$", version):
        return None
    # conda's name=1.26 matches 1.26.*; name=1.26.4 is one release (its patch releases aside)
    return CondaSpec(name, "exact" if version.count(".") >= 2 else "fuzzy", version, build)


def newest_in(versions: list[str], specifier: str) -> str | None:
    """The newest of ``versions`` (known releases) that ``specifier`` (PEP 440; "" = any) allows."""
    allowed = [v for v in versions if not specifier or contains(specifier, v)]
    return max(allowed, key=vtuple) if allowed else None
