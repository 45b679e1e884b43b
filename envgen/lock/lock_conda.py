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
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.errors import InputError
from envgen.files import write_atomically
from envgen.plan.condalock import (
    CONDA_LOCK_FORMAT,
    EXPLICIT,
    conda_lock_path,
    conda_specs,
)
from envgen.profile.loader import profile_arg

if TYPE_CHECKING:
    from envgen.kb import KnowledgeBase


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




def lock_conda(ref: str, *, channel_urls: Mapping[str, str] | None = None,
               env: Mapping[str, str] | None = None, kb: KnowledgeBase | None = None) -> tuple[Path, int]:
    """Solve a conda profile's conda packages and write ``<profile>.conda.txt`` (an explicit list) beside
    it. ``channel_urls`` maps a channel the profile names to the URL to solve from (a mirror, or a
    local channel); the list records the URLs the packages were found at."""
    from importlib.metadata import version

    from envgen.config import load_config, merge_mirrors
    from envgen.plan.image import plan_image
    from envgen.profile import find_profile, load_profile
    from envgen.render.plan import render_context

    environ = os.environ if env is None else env
    source = find_profile(ref, environ)
    profile = load_profile(ref, environ)
    from envgen.plan.installers import installer_of

    if not installer_of(profile).conda_env:
        raise InputError(f"profile {profile.name!r} has installer: {profile.installer}; conda locks are for conda "
                         "profiles", fix=f"run `envgen lock {profile_arg(profile)}` without --conda-channel")
    config = load_config(env)
    if kb is None:
        from envgen.kb.cache import kb_for

        kb = kb_for(environ)
    plan = render_context(plan_image(profile, kb), config, use_lock=False)
    profile = plan.profile  # as planned: the values it left to the KB (an NGC release's, a torch tag's) filled in
    mirrors = merge_mirrors(profile.mirrors, config.mirrors).conda_channels
    urls = {**mirrors, **(channel_urls or {})}
    channels = [urls.get(name, name) for name in profile.channels]
    specs = conda_specs(profile.python_version, plan.conda_pip, plan.pins.conda)
    glibc = kb.glibc(profile.base)
    pins = solve(specs, channels, glibc=glibc, cuda=profile.cuda)
    header = [
        f'envgen conda lock for profile "{profile.name}": every conda package of its environment, solved',
        "once by py-rattler; micromamba installs this list without solving (`--file`). Written by",
        "`envgen lock`; run it again after changing python, the frameworks or packages.conda.",
        f"format: {CONDA_LOCK_FORMAT}",
        f"python: {profile.python_version}",
        f"conda-pins: {' '.join(specs)}",
        f"channels: {' '.join(profile.channels)}",
        f"solved-from: {' '.join(channels)}",
        f"platform: linux-64 (virtual packages: __glibc {glibc or 'unknown'}, __cuda {profile.cuda or '-'})",
        f"solver: py-rattler {version('py-rattler')}",
        f"envgen: {plan.version}",
    ]
    target = conda_lock_path(source.path)
    write_atomically(target, explicit_text(pins, header=header), mode=0o644)
    return target, len(pins)


def lock_line(ref: str, *, kb: KnowledgeBase, wheelhouse: Path | None = None, channels: Sequence[str] = (),
              platforms: Sequence[str] = ()) -> str:
    """`envgen lock` for a conda profile (its installer's ``lock_command``): ``channels`` as --conda-channel gives
    them (NAME=URL: solve channel NAME from URL); the list written, in one line (``wheelhouse``: pip's, not asked)."""
    if platforms:
        raise InputError(f"--platform {platforms[0]} is for pip profiles; a conda lock is linux/amd64's",
                         fix="drop --platform")
    urls = {}
    for pair in channels:
        name, sep, url = pair.partition("=")
        if not sep or not name or not url:
            raise InputError(f"--conda-channel {pair!r} is not NAME=URL",
                             fix="e.g. --conda-channel conda-forge=https://mirror.example/conda-forge")
        urls[name] = url
    path, count = lock_conda(ref, channel_urls=urls, kb=kb)
    return f"locked {ref}: {count} conda package(s) -> {path}"
