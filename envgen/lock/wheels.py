"""A wheelhouse for builds that cannot download on their own.

The classic builder has no build secrets, so a container behind a TLS-intercepting proxy cannot
reach PyPI. Instead the host, which already trusts the proxy, downloads every wheel the image
needs (for the image's Python and platform) and the build installs offline from the context.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from envgen.errors import BuildFailed
from envgen.plan.requirements import base_conflict, depends_on
from envgen.vocabulary import GLIBC_WHEN_UNKNOWN

_NO_MATCH = re.compile(r"No matching distribution found for (\S+)")
_CONSTRAINT = re.compile(r"\(constraint\) ([A-Za-z0-9_.-]+)==(\S+)")  # pip's ResolutionImpossible, a -c line
NEWEST_GLIBC_MINOR = int(GLIBC_WHEN_UNKNOWN.split(".")[1])  # assumed when the image's glibc is unknown
_LEGACY_TAGS = ("manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64")


def manylinux_platforms(glibc: str | None = None) -> tuple[str, ...]:
    """The wheel platform tags an x86-64 Linux image with this glibc can load, newest first (pip needs
    them spelled out). A host with a newer glibc than the image must not pick a wheel the image
    cannot load (manylinux_2_38 on Debian 12's glibc 2.36)."""
    newest = NEWEST_GLIBC_MINOR
    if glibc:
        parts = glibc.split(".")
        if len(parts) >= 2 and parts[0] == "2" and parts[1].isdigit():
            newest = int(parts[1])
    return tuple(f"manylinux_2_{n}_x86_64" for n in range(newest, 16, -1)) + _LEGACY_TAGS


def configured_wheelhouse(env: Mapping[str, str] | None = None) -> Path | None:
    """A local directory pip is already told to look in (PIP_FIND_LINKS), if there is one."""
    env = os.environ if env is None else env
    for entry in env.get("PIP_FIND_LINKS", "").split():
        path = Path(entry.removeprefix("file://"))
        if path.is_absolute() and path.is_dir():
            return path
    return None


def target_options(python_minor: str, platforms: Sequence[str], find_links: Sequence[str],
                   index_urls: Sequence[str]) -> list[str]:
    """pip options that make the host choose wheels for the image (its CPython, its platform tags)
    from the given sources."""
    options = ["--only-binary=:all:", "--implementation", "cp", "--python-version", python_minor]
    for platform in platforms:
        options += ["--platform", platform]
    for link in find_links:
        options += ["--find-links", link]
    for url in index_urls:
        options += ["--extra-index-url", url]
    return options


def download_command(requirements: list[Path], dest: Path, python_minor: str, *, find_links: list[str],
                     index_urls: list[str], platforms: tuple[str, ...], offline: bool = False,
                     constraints: Path | None = None) -> list[str]:
    """``pip download`` of the image's wheels; ``offline``: from ``find_links`` alone (``--no-index``: no index is
    contacted, whatever pip's own configuration names); ``constraints``: the versions a base_provides base holds
    (constraints.base.txt), as the build's own installs are given them."""
    # not --quiet: its output goes to a log, and a ResolutionImpossible says what caused it only without it
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--dest", str(dest),
               *(["--no-index"] if offline else []),
               *target_options(python_minor, platforms, find_links, [] if offline else index_urls)]
    for req in requirements:
        command += ["-r", str(req)]
    return command + (["-c", str(constraints)] if constraints is not None else [])


def prefetch(requirements: list[Path], dest: Path, python_minor: str, *, find_links: list[str],
             index_urls: list[str], platforms: tuple[str, ...], log_path: Path, offline: bool = False,
             constraints: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Download the wheels for ``requirements`` into ``dest``; raise BuildFailed with pip's tail. ``offline``: from
    ``find_links`` (the wheelhouse) alone; a requirement none of them holds is one line naming both.
    ``constraints``: the base's versions (base_provides); a requirement that needs another is one line naming it.
    ``env``: set for pip beside the process's own (the mirrors' indexes, NETRC: their logins, never an argument)."""
    dest.mkdir(parents=True, exist_ok=True)
    command = download_command(requirements, dest, python_minor, find_links=find_links, index_urls=index_urls,
                               platforms=platforms, offline=offline, constraints=constraints)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, text=True, check=False,
                              env={**os.environ, **env} if env else None)
    if done.returncode != 0:
        text = log_path.read_text(encoding="utf-8", errors="replace")
        tail = "\n".join(text.splitlines()[-15:])
        missing, held = _NO_MATCH.search(text), _CONSTRAINT.search(text)
        if constraints is not None and held:
            message, fix = base_conflict(held.group(1), held.group(2), depends_on(text, held.group(1)))
            raise BuildFailed(message, fix=fix, log_path=str(log_path), tail=tail)
        if offline and missing:
            raise BuildFailed(
                f"--offline: no wheel for {missing.group(1)} in {', '.join(find_links) or 'no wheelhouse'} (for "
                f"CPython {python_minor} on Linux x86-64)",
                fix=f"put its wheel into the wheelhouse (pip download --only-binary=:all: --python-version "
                    f"{python_minor} --platform {platforms[0]} -d DIR '{missing.group(1)}' where an index is "
                    "reachable); where the base image holds it already, name it under base_provides (packages: "
                    "NAME: VERSION, or frameworks) so it is neither downloaded nor installed; or build without "
                    "--offline", log_path=str(log_path), tail=tail)
        raise BuildFailed(f"downloading wheels for the classic builder failed (pip exit {done.returncode})",
                          fix=f"see {log_path}", log_path=str(log_path), tail=tail)
    return sorted(dest.glob("*.whl"))
