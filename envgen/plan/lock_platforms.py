"""The lock file's blocks for the profile's platforms other than linux/amd64 (``platforms: [linux/amd64,
linux/arm64]``): their format, written by `envgen lock` (``envgen.lock.platforms``) and read by `envgen check`.

The lock file's sections ([environment], [extras], [tools], [apt]) are linux/amd64's, as they always were: a lock
with no platform block is an amd64 lock, and every reader of before reads a new lock unchanged (``parse_lock``
takes the blocks' lines for comments). Each other platform gets a block after them::

    # platform linux/arm64: target cp311-manylinux_2_28_aarch64; uv 0.13.9 (uv pip compile) --python-platform ...
    # platform linux/arm64 [environment]: 40 package(s)
    #   torch==2.11.0 --hash=sha256:...
    # platform linux/arm64 [extras]: 1 package(s)
    #   numpy==1.26.4 --hash=sha256:...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from envgen.plan.lockfile import LockEntry, _package_entry

AMD64 = "linux/amd64"
# the OCI platform -> the machine its wheels are tagged for
ARCH = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
SECTIONS = ("environment", "extras")
_BLOCK_RE = re.compile(r"^# platform (?P<platform>linux/[a-z0-9]+)(?: \[(?P<section>environment|extras)\])?:")
_ENTRY_RE = re.compile(r"^#   (?P<line>\S.*)$")


@dataclass(frozen=True)
class PlatformSet:
    """One platform's resolved sets."""

    platform: str
    target: str  # cp311-manylinux_2_28_aarch64
    environment: tuple[LockEntry, ...]
    extras: tuple[LockEntry, ...]
    note: str = ""  # how it was resolved


def format_block(found: PlatformSet) -> str:
    lines = [f"# platform {found.platform}: target {found.target}; {found.note}"]
    for section, entries in (("environment", found.environment), ("extras", found.extras)):
        lines.append(f"# platform {found.platform} [{section}]: {len(entries)} package(s)")
        lines += [f"#   {entry.line}" for entry in entries]
    return "\n".join(lines) + "\n"


def parse_blocks(text: str, where: str = "lock file") -> dict[str, PlatformSet]:
    """The platform blocks of a lock file's text, by platform (none: an amd64 lock)."""
    found: dict[str, dict[str, list[LockEntry]]] = {}
    targets: dict[str, tuple[str, str]] = {}
    current: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        block = _BLOCK_RE.match(line)
        if block:
            platform = block.group("platform")
            found.setdefault(platform, {s: [] for s in SECTIONS})
            current = (platform, block.group("section")) if block.group("section") else None
            if current is None:
                target, _, note = line.split(":", 1)[1].strip().removeprefix("target ").partition("; ")
                targets[platform] = (target, note)
            continue
        entry = _ENTRY_RE.match(line)
        if entry and current is not None:
            found[current[0]][current[1]].append(_package_entry(entry.group("line"), f"{where}:{number}"))
        elif not line.startswith("#"):
            current = None
    out = {}
    for platform, sets in found.items():
        target, note = targets.get(platform, ("", ""))
        out[platform] = PlatformSet(platform, target, tuple(sets["environment"]), tuple(sets["extras"]), note)
    return out


def locked_platforms(path: Path) -> tuple[str, ...]:
    """The platforms a lock file holds sets for: linux/amd64 (its sections), then each platform block's."""
    return (AMD64, *parse_blocks(path.read_text(encoding="utf-8"), str(path)))
