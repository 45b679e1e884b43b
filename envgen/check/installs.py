"""The Python distributions a profile installs, by PEP 503 name: the frameworks (as the distribution that
carries them, with its extras and, for torch, the CUDA build), torchvision/torchaudio, and every pin of
``packages.pip`` and (conda profiles) ``packages.conda``. Frameworks an NGC base already carries are left out:
NVIDIA builds them against its own packages."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envgen.check.context import CheckContext

_PIP = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?==(.+)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Installed:
    name: str  # PEP 503 name: "tensorflow", "nvidia-cudnn-cu12"
    version: str  # "2.15.1", "2.1.2" (torch without its local label)
    origin: str  # where the profile names it: "frameworks.tensorflow", "packages.pip"
    extras: frozenset[str] = frozenset()
    build: str | None = None  # torch: the variant tag (cu121, cpu)

    @property
    def label(self) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        build = f"+{self.build}" if self.build else ""
        return f"{self.name}{extras}=={self.version}{build}"


def _frameworks(ctx: CheckContext) -> list[Installed]:
    if ctx.ngc is not None:
        return []
    profile, out = ctx.profile, []
    tf = profile.frameworks.tensorflow
    if tf and ctx.tf_package:
        m = _PIP.match(f"{ctx.tf_package}=={tf}")
        if m:
            extras = frozenset(canonical(e) for e in (m.group(2) or "").split(",") if e.strip())
            out.append(Installed(canonical(m.group(1)), tf, "frameworks.tensorflow", extras))
    torch = profile.torch_version
    if torch:
        tag = ctx.torch_variant.tag if ctx.torch_variant is not None else (profile.torch_variant or "unknown")
        out.append(Installed("torch", torch, "frameworks.pytorch", build=tag))
        release = ctx.torch_release
        for field in ("torchvision", "torchaudio"):
            version = getattr(profile.frameworks, field) or (getattr(release, field, None) if release else None)
            if version:
                out.append(Installed(field, version.split("+", 1)[0], f"frameworks.{field}"))
    return out


def installed(ctx: CheckContext) -> dict[str, Installed]:
    """Every distribution the profile pins, by name (a later statement of one name wins, as pip's would)."""
    out = {i.name: i for i in _frameworks(ctx)}
    for spec in ctx.profile.packages.pip:
        m = _PIP.match(spec)
        if m:
            extras = frozenset(canonical(e) for e in (m.group(2) or "").split(",") if e.strip())
            name = canonical(m.group(1))
            out.setdefault(name, Installed(name, m.group(3).split("+", 1)[0], "packages.pip", extras))
    if ctx.profile.installer == "conda":
        for spec in ctx.profile.packages.conda:
            name, _, rest = spec.split("::", 1)[-1].partition("=")
            version = rest.split("=", 1)[0]
            if version:
                out.setdefault(canonical(name), Installed(canonical(name), version, "packages.conda"))
    return out
