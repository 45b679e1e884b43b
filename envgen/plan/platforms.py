"""What differs per platform of the profile (``platforms: [linux/amd64, linux/arm64]``), planned from one image plan:
for each exact pin the image installs, the build that platform gets (linux/amd64: the knowledge base's x86-64 rows,
as every other reader; linux/arm64: platform_wheels.yaml, the aarch64 wheel read from PyPI, with its sha256 and
CUDA). Read by `envgen show` and `envgen check` (check.gpu.images)."""

from __future__ import annotations

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.platforms import PlatformWheel
from envgen.plan.image import ImagePlan

AMD64, ARM64 = "linux/amd64", "linux/arm64"


def exact_pins(plan: ImagePlan) -> list[tuple[str, str]]:
    """(PEP 503 name, release) of every exact pin the image installs (frameworks first), the local label dropped."""
    seen: dict[str, str] = {}
    for pin in [*plan.frameworks, *plan.pip]:
        name, sep, version = pin.split(";")[0].partition("==")
        name = name.split("[")[0].strip().lower().replace("_", "-")
        if sep and version.strip() and name not in seen:
            seen[name] = version.strip().split("+")[0]
    return list(seen.items())


def arm64_row(kb: KnowledgeBase, name: str, version: str) -> PlatformWheel | None:
    """platform_wheels.yaml's linux/arm64 row of ``name`` ``version`` (a PEP 440 match), or None."""
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    for row in kb.platform_wheels:
        if row.name == name and row.platform == ARM64:
            try:
                if Version(row.version) == wanted:
                    return row
            except InvalidVersion:
                continue
    return None


def _amd64(plan: ImagePlan, name: str) -> str:
    cuda = {"torch": plan.cuda.torch, "tensorflow": plan.cuda.tensorflow}.get(name)
    if name in ("torch", "tensorflow"):
        return f"CUDA {cuda} (the knowledge base's x86-64 build)" if cuda else "a CPU build (x86-64)"
    return "the x86-64 wheel uv resolves"


def _arm64(kb: KnowledgeBase, name: str, version: str) -> str:
    row = arm64_row(kb, name, version)
    if row is None:
        return "not in platform_wheels.yaml: the aarch64 wheel uv resolves (envgen lock)"
    if not row.python:
        return "no manylinux aarch64 wheel on PyPI"
    build = (f", CUDA {row.cuda}" if row.cuda else ", a CPU build") if row.framework else ""
    return f"{row.wheel} (sha256 {(row.sha256 or '')[:12]}; CPython {', '.join(row.python)}){build}"


def platform_lines(plan: ImagePlan, kb: KnowledgeBase, platforms: list[str]) -> list[str]:
    """One line per platform and exact pin: what that platform installs (``kb``: the command's)."""
    out = []
    for platform in platforms:
        for name, version in exact_pins(plan):
            said = _arm64(kb, name, version) if platform == ARM64 else _amd64(plan, name)
            out.append(f"{platform}: {name}=={version}: {said}")
    return out
