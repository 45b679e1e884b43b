"""Conda locks: a conda environment solved once, written as an explicit list (`@EXPLICIT`, one package
URL and hash per line), which conda and micromamba install without solving again
(`micromamba create --file LIST`).

The solve is py-rattler's (`rattler.solve` over the channels' repodata, for the image's platform and
virtual packages such as ``__glibc``); envgen only writes the list. No public conda channel can be
reached from where envgen is developed: this path is tested against a local channel built from real
package archives (tests/unit/test_lock_conda.py).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

from envgen.errors import InputError

EXPLICIT = "@EXPLICIT"
_LINE_RE = re.compile(r"^(?P<url>(?:https?|file)://\S+?/(?P<file>[^/#\s]+\.(?:conda|tar\.bz2)))#(?P<md5>[0-9a-f]{32})$")
_SHA_RE = re.compile(r"^# sha256: (?P<sha>[0-9a-f]{64})$")


@dataclass(frozen=True)
class CondaPin:
    name: str
    version: str
    build: str
    url: str
    md5: str
    sha256: str

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[-1]


def solve(specs: Sequence[str], channels: Sequence[str], *, platform: str = "linux-64",
          glibc: str | None = None, cuda: str | None = None) -> tuple[CondaPin, ...]:
    """Solve ``specs`` against ``channels`` for ``platform``; every record with its URL and hashes."""
    import rattler

    def package(name: str, version: str) -> rattler.GenericVirtualPackage:
        return rattler.GenericVirtualPackage(rattler.PackageName(name), rattler.Version(version),
                                             rattler.BuildString("0"))

    # The image's virtual packages, not the host's: the solve is for the image.
    virtual = [package("__unix", "0"), package("__linux", "5.10")]
    if glibc:
        virtual.append(package("__glibc", glibc))
    if cuda:
        virtual.append(package("__cuda", cuda))
    try:
        records = asyncio.run(rattler.solve(
            sources=[rattler.Channel(c) for c in channels], specs=list(specs),
            platforms=[rattler.Subdir(platform), rattler.Subdir("noarch")], virtual_packages=virtual))
    except Exception as exc:  # rattler raises its own exception types (solver, gateway, I/O)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"conda solve of {' '.join(specs)} on {' '.join(channels)} failed: {first}",
                         fix="check the specs and that the channels can be reached (or use a mirror)") from None
    pins = []
    for record in records:
        if not record.md5 or not record.sha256:
            raise InputError(f"conda package {record.name.normalized} has no md5/sha256 in its channel's repodata",
                             fix="re-index the channel")
        pins.append(CondaPin(record.name.normalized, str(record.version), str(record.build), str(record.url),
                             record.md5.hex(), record.sha256.hex()))
    return tuple(sorted(pins, key=lambda p: p.name))


def explicit_text(pins: Sequence[CondaPin], *, header: Sequence[str] = ()) -> str:
    """The explicit list: each package's URL with its md5 (the fragment conda and micromamba check), its
    sha256 on the comment line above it; sorted by name, no timestamps."""
    lines = [f"# {line}" for line in header] + [EXPLICIT]
    for pin in sorted(pins, key=lambda p: p.name):
        lines += [f"# sha256: {pin.sha256}", f"{pin.url}#{pin.md5}"]
    return "\n".join(lines) + "\n"


def parse_explicit(text: str, where: str = "explicit list") -> tuple[tuple[str, str, str], ...]:
    """(url, md5, sha256) per package line, strictly: a list cannot carry other conda options."""
    out: list[tuple[str, str, str]] = []
    seen_marker = False
    sha = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line == EXPLICIT:
            seen_marker = True
            continue
        if line.startswith("#"):
            match = _SHA_RE.match(line)
            sha = match.group("sha") if match else sha
            continue
        entry = _LINE_RE.match(line)
        if not seen_marker or not entry:
            raise InputError(f"{where}:{number}: {line[:60]!r} is not a 'URL#md5' line after @EXPLICIT",
                             fix="regenerate it with `envgen lock PROFILE`")
        out.append((entry.group("url"), entry.group("md5"), sha))
        sha = ""
    if not seen_marker:
        raise InputError(f"{where}: no @EXPLICIT line", fix="regenerate it with `envgen lock PROFILE`")
    return tuple(out)
