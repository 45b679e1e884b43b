"""The lock file's sets per platform: their format, written by `envgen lock` (``envgen.lock.platforms``), read by
`envgen check` and by the plan, which gives the render one lock per platform (``platform_locks``).

The lock file's sections ([environment], [extras], [tools], [apt]) are the main platform's: linux/amd64's when the
profile builds it (as they always were: a lock with no platform block is an amd64 lock, and every reader of before
reads a new lock unchanged), else the profile's first platform's, named by the header field ``main-platform``
(written only then). Each other platform gets a block after them, which ``parse_lock`` takes for comments::

    # platform linux/arm64: target cp311-manylinux_2_28_aarch64; uv 0.13.9 (uv pip compile) --python-platform ...
    # platform linux/arm64 uv-wheel: https://files.pythonhosted.org/.../uv-0.13.9-...aarch64.whl
    # platform linux/arm64 [environment]: 40 package(s)
    #   torch==2.11.0 --hash=sha256:...
    # platform linux/arm64 [extras]: 1 package(s)
    #   numpy==1.26.4 --hash=sha256:...
    # platform linux/arm64 [tools]: 2 package(s)
    #   uv==0.13.9 --hash=sha256:...

The base image per platform: header field ``base-manifests`` (``linux/amd64=sha256:... linux/arm64=sha256:...``,
``-`` for a platform the base does not hold), where the lock holds more than one platform.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from envgen.plan.lockfile import Lock, LockEntry, _package_entry

AMD64 = "linux/amd64"
MAIN_FIELD = "main-platform"  # the header field naming the main sections' platform when it is not linux/amd64
BASES_FIELD = "base-manifests"
# the OCI platform -> the machine its wheels are tagged for
ARCH = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
SECTIONS = ("environment", "extras", "tools")
_BLOCK_RE = re.compile(r"^# platform (?P<platform>linux/[a-z0-9]+)(?: \[(?P<section>environment|extras|tools)\])?:")
_FIELD_RE = re.compile(r"^# platform (?P<platform>linux/[a-z0-9]+) (?P<key>[a-z][a-z-]*): (?P<value>\S.*)$")
_ENTRY_RE = re.compile(r"^#   (?P<line>\S.*)$")


@dataclass(frozen=True)
class PlatformSet:
    """One platform's resolved sets."""

    platform: str
    target: str  # cp311-manylinux_2_28_aarch64
    environment: tuple[LockEntry, ...]
    extras: tuple[LockEntry, ...]
    note: str = ""  # how it was resolved
    tools: tuple[LockEntry, ...] = ()  # the installer's own wheels for the platform (uv, pip)
    uv_wheel: str = ""  # uv's wheel URL for the platform (its sha256: the tools' uv entry)


def main_platform(platforms: Sequence[str]) -> str:
    """The platform a lock's main sections are for: linux/amd64 when the profile builds it, else its first."""
    return AMD64 if AMD64 in platforms or not platforms else platforms[0]


def main_arch(platforms: Sequence[str]) -> str:
    """The machine the main sections' wheels are tagged for (x86_64; aarch64 for an arm64-only profile)."""
    return ARCH[main_platform(platforms)]


def target_arch(platform: str) -> str:
    """BuildKit's TARGETARCH for an OCI platform (linux/arm64 -> arm64): what the per-platform files are named by."""
    return platform.split("/")[1]


def format_block(found: PlatformSet) -> str:
    lines = [f"# platform {found.platform}: target {found.target}; {found.note}"]
    if found.uv_wheel:
        lines.append(f"# platform {found.platform} uv-wheel: {found.uv_wheel}")
    sections = [("environment", found.environment), ("extras", found.extras)]
    sections += [("tools", found.tools)] if found.tools else []
    for section, entries in sections:
        lines.append(f"# platform {found.platform} [{section}]: {len(entries)} package(s)")
        lines += [f"#   {entry.line}" for entry in entries]
    return "\n".join(lines) + "\n"


def parse_blocks(text: str, where: str = "lock file") -> dict[str, PlatformSet]:
    """The platform blocks of a lock file's text, by platform (none: a lock of its main platform alone)."""
    found: dict[str, dict[str, list[LockEntry]]] = {}
    heads: dict[str, dict[str, str]] = {}
    current: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        block, field = _BLOCK_RE.match(line), _FIELD_RE.match(line)
        if block or field:
            platform = (block or field).group("platform")  # type: ignore[union-attr]
            found.setdefault(platform, {s: [] for s in SECTIONS})
            head = heads.setdefault(platform, {})
            current = (platform, block.group("section")) if block and block.group("section") else None
            if field:
                head[field.group("key")] = field.group("value")
            elif current is None:
                target, _, note = line.split(":", 1)[1].strip().removeprefix("target ").partition("; ")
                head.update(target=target, note=note)
            continue
        entry = _ENTRY_RE.match(line)
        if entry and current is not None:
            found[current[0]][current[1]].append(_package_entry(entry.group("line"), f"{where}:{number}"))
        elif not line.startswith("#"):
            current = None
    return {platform: PlatformSet(platform, heads[platform].get("target", ""), tuple(sets["environment"]),
                                  tuple(sets["extras"]), heads[platform].get("note", ""), tuple(sets["tools"]),
                                  heads[platform].get("uv-wheel", ""))
            for platform, sets in found.items()}


def lock_main_platform(lock: Lock) -> str:
    return lock.field(MAIN_FIELD) or AMD64


def locked_platforms(path: Path) -> tuple[str, ...]:
    """The platforms a lock file holds sets for: its main sections' (linux/amd64 unless ``main-platform`` says),
    then each platform block's."""
    from envgen.plan.lockfile import parse_lock

    text = path.read_text(encoding="utf-8")
    main = lock_main_platform(parse_lock(text, str(path), path))
    return (main, *(p for p in parse_blocks(text, str(path)) if p != main))


def platform_lock(lock: Lock, found: PlatformSet) -> Lock:
    """``lock`` with a platform block's sets in place of its main ones (its base, apt pins and inputs kept): what
    the render writes for that platform. uv's wheel is the block's; without one the lock names no uv."""
    fields = tuple((key, found.uv_wheel if key == "uv-wheel" else value) for key, value in lock.fields
                   if key != "uv-wheel" or found.uv_wheel)
    return replace(lock, environment=found.environment, extras=found.extras, tools=found.tools, fields=fields)


def platform_locks(lock: Lock | None, platforms: Sequence[str]) -> tuple[tuple[str, Lock], ...]:
    """One lock per platform of the profile, by TARGETARCH (amd64, arm64), where the profile has more than one
    platform and the lock holds a set for each; else () (the render writes the main sets alone, as before; a build
    of a platform the lock lacks is refused: ``pipeline.platforms.refuse_split_lock``)."""
    if lock is None or len(platforms) < 2 or lock.path is None:
        return ()
    main = lock_main_platform(lock)
    blocks = parse_blocks(lock.path.read_text(encoding="utf-8"), str(lock.path))
    if any(p != main and p not in blocks for p in platforms):
        return ()
    return tuple((target_arch(p), lock if p == main else platform_lock(lock, blocks[p])) for p in platforms)
