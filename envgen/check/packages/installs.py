"""The Python distributions the install plan puts into the image, by PEP 503 name: the frameworks' pins (as the
distribution that carries them, with its extras and, for torch, the CUDA build of its local label), the
frameworks the base image provides, ``packages.pip`` and (conda profiles) ``packages.conda``. An NGC base's
frameworks are left out: NVIDIA builds them against its own packages. A ``packages.pip`` line that floats (a range,
an unpinned name) is no installed version: ``floating`` gives those, with their specifier; a line whose marker does
not hold in the image is in neither."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envgen.check.context import CheckContext
from envgen.profile.requirements import PipLine, canonical

_PIP = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?==(.+)$")


@dataclass(frozen=True)
class Installed:
    name: str  # PEP 503 name: "tensorflow", "nvidia-cudnn-cu12"
    version: str  # "2.15.1", "2.1.2" (without a local label)
    origin: str  # where it comes from: "frameworks", "base image", "packages.pip", "packages.conda"
    extras: frozenset[str] = frozenset()
    build: str | None = None  # torch: the CUDA build (cu121, cpu) of the wheel; "unknown" without a label

    @property
    def label(self) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        build = f"+{self.build}" if self.build and self.build != "unknown" else ""
        return f"{self.name}{extras}=={self.version}{build}"


def _pin(spec: str, origin: str) -> Installed | None:
    """A pin the plan wrote for the frameworks (``torch==2.1.2+cu118``, ``tensorflow[and-cuda]==2.15.1``)."""
    m = _PIP.match(spec)
    if m is None:
        return None
    name = canonical(m.group(1))
    extras = frozenset(canonical(e) for e in (m.group(2) or "").split(",") if e.strip())
    version, _, local = m.group(3).partition("+")
    build = (local or "unknown") if name == "torch" else None
    return Installed(name, version, origin, extras, build)


@dataclass(frozen=True)
class Floating:
    """A ``packages.pip`` line pip resolves: ``numpy>=1.20,<2``, ``six``."""

    line: PipLine
    origin: str = "packages.pip"

    @property
    def name(self) -> str:
        return self.line.name

    @property
    def spec(self) -> str:
        return self.line.specifier

    @property
    def label(self) -> str:
        return self.line.requirement


def floating(ctx: CheckContext) -> dict[str, Floating]:
    """The packages.pip lines that float, by name (a name pinned exactly elsewhere in the plan is not floating)."""
    pinned = installed(ctx)
    out: dict[str, Floating] = {}
    for line in ctx.plan.user_lines:
        if line.floats and line.name not in pinned:
            out.setdefault(line.name, Floating(line))
    return out


def installed(ctx: CheckContext) -> dict[str, Installed]:
    """Every distribution the plan installs, by name (the first statement of a name wins, as the frameworks'
    stage comes first)."""
    plan, out = ctx.plan, dict[str, Installed]()
    specs = [(p, "frameworks") for p in plan.framework_pip]
    if ctx.ngc is None:
        specs += [(p, "base image") for p in plan.preinstalled]
    for spec, origin in specs:
        item = _pin(spec, origin)
        if item is not None:
            out.setdefault(item.name, item)
    for line in plan.user_lines:  # read once by the plan: name, extras and version as they are
        version = line.exact
        if version is not None:
            out.setdefault(line.name, Installed(line.name, version.partition("+")[0], "packages.pip",
                                                frozenset(line.extras), (version.partition("+")[2] or "unknown")
                                                if line.name == "torch" else None))
    for spec in plan.user_conda:
        name, _, rest = spec.split("::", 1)[-1].partition("=")
        version = rest.split("=", 1)[0]
        if version:
            out.setdefault(canonical(name), Installed(canonical(name), version, "packages.conda"))
    return out
