"""Resolving the lock's sets for the profile's platforms other than linux/amd64 (their format:
``envgen.plan.lock_platforms``). Each set is resolved by uv for ``<arch>-manylinux_<glibc>`` (aarch64 beside x86_64),
wheels only, and each package keeps the wheel the image's CPython on that machine installs
(``lock_uv.choose_wheels``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.check.findings import Finding
from envgen.errors import BuildFailed, InputError
from envgen.plan.image import ImagePlan
from envgen.plan.lock_platforms import AMD64, ARCH, PlatformSet, main_platform
from envgen.plan.lockfile import sorted_entries
from envgen.profile.model import Profile

if TYPE_CHECKING:  # uv's module (packaging.tags, subprocess) is imported where a set is resolved, not by a warm check
    from envgen.lock.lock_uv import Resolved


def wheel_tags(glibc: str | None, platform: str) -> tuple[str, ...]:
    """The manylinux tags an image of ``platform`` with this glibc loads, newest first."""
    from envgen.lock.wheels import manylinux_platforms

    return tuple(tag.replace("x86_64", ARCH[platform]) for tag in manylinux_platforms(glibc))


Resolver = Callable[[list[str], str, tuple[str, ...]], "Resolved"]  # (pins, arch, wheel tags) -> the set


def resolve_platform(platform: str, pins: Sequence[str], extras: Sequence[str], python_minor: str,
                     glibc: str | None, resolve: Resolver, resolver_note: str,
                     tools: Sequence[str] = ()) -> PlatformSet:
    """The environment set (``pins``) and what ``extras`` add, resolved for ``platform``, and the installer's own
    ``tools`` (uv, pip: their wheels for that machine): a set that has no wheel there is an error naming the
    platform."""
    from envgen.lock.lock_uv import uv_platform

    arch, tags = ARCH[platform], wheel_tags(glibc, platform)
    try:
        environment = resolve(list(pins), arch, tags).entries
        combined = resolve([*pins, *extras], arch, tags).entries if extras else dict(environment)
        tool = resolve(list(tools), arch, tags) if tools else None
    except (InputError, BuildFailed) as exc:  # no wheel there (choose_wheels), or uv found no set (its tail kept)
        raise InputError(f"{platform}: {exc.message}", fix=exc.fix or f"drop {platform} from platforms"
                         ).with_tail(exc.tail) from None
    added = sorted_entries(e for name, e in combined.items() if name not in environment)
    target = f"cp{python_minor.replace('.', '')}-{tags[0]}"
    return PlatformSet(platform, target, sorted_entries(environment.values()), added,
                       f"{resolver_note} --python-platform {uv_platform(glibc, arch)}",
                       sorted_entries(tool.entries.values()) if tool else (), tool.urls.get("uv", "") if tool else "")


def chosen_platforms(profile: Profile, asked: Sequence[str]) -> tuple[str, ...]:
    """The platforms `envgen lock` resolves: ``asked`` (``--platform``, each one of the profile's), else the
    profile's; the main platform's sets always (the lock's sections). uv resolves every platform but the main
    linux/amd64 one (pip's dry run, Python 3.7, cannot target another machine)."""
    from envgen.lock.lock_uv import uv_serves

    for platform in asked:
        if platform not in profile.platforms:
            raise InputError(f"--platform {platform} is not one of profile {profile.name!r}'s platforms "
                             f"({', '.join(profile.platforms)})",
                             fix=f"add it to the profile's platforms, or lock {' or '.join(profile.platforms)}")
    main = main_platform(profile.platforms)
    chosen = (main, *(p for p in profile.platforms if p != main and (not asked or p in asked)))
    foreign = [p for p in chosen if p != AMD64]
    if foreign and not uv_serves(profile.python_minor):
        raise InputError(f"platforms {', '.join(foreign)} are locked by uv, which serves Python >= 3.8, not "
                         f"{profile.python_minor}", fix="use python 3.8 or newer, or platforms: [linux/amd64]")
    return chosen


_PREFIX = "platform-resolved-"


def platform_findings(plan: ImagePlan, environ: Mapping[str, str], cache: Path | None, *,
                      offline: bool = False) -> list[Finding]:
    """`envgen check`'s resolution of the pip set for each platform of the profile but linux/amd64 (uv for
    ``<arch>-manylinux_<glibc>``, sdists allowed as pip would build them): a set with no wheel there is an error
    naming the platform, a package only an sdist serves a warning. The answer is kept in the cache directory for
    ``TTL_S`` under the hash of what it depends on (the amd64 set's own: ``judged.set_key``); offline, a kept
    answer of any age, else nothing."""
    from envgen.lock.judged import TTL_S, keep_findings, kept_findings, set_key

    others = [p for p in plan.profile.platforms if p != AMD64]
    if not others or not (plan.pins.pip or plan.pins.pip_extra):
        return []
    path = cache / f"{_PREFIX}{set_key(plan, environ)}-{'-'.join(ARCH[p] for p in others)}.json" if cache else None
    kept = kept_findings(path, offline)
    if kept is not None or offline:
        return kept or []
    from envgen.lock.lock_uv import uv_serves

    if not uv_serves(plan.profile.python_minor):
        return []
    found = [f for platform in others for f in _resolved(plan, environ, platform)]
    keep_findings(path, found, TTL_S, f"{_PREFIX}*.json")
    return found


def _resolved(plan: ImagePlan, environ: Mapping[str, str], platform: str) -> list[Finding]:
    from envgen.check.util import finding
    from envgen.lock.lock_uv import uv_platform, uv_resolve

    glibc, pins = plan.base_part.glibc, [*plan.pins.pip, *plan.pins.pip_extra]
    note = f"CPython {plan.profile.python_minor}, {uv_platform(glibc, ARCH[platform])}"
    try:
        done = uv_resolve(pins, plan.profile.python_minor, glibc, wheel_tags(glibc, platform), find_links=[],
                          index_urls=plan.pip_index_urls, index_url=None, env=environ, only_binary=False,
                          constraints=plan.base_constraints, arch=ARCH[platform])
    except (InputError, BuildFailed) as exc:
        reason = next((line.strip() for line in reversed(exc.tail.splitlines()) if line.strip()), exc.message)
        return [replace(finding("error", "resolve-no-wheel", f"no set of wheels for {note}: {reason}",
                                "pin releases that publish wheels for this platform, or drop it from platforms",
                                _SOURCE), platform=platform)]
    out = [replace(finding("info", "resolve-ok", f"uv resolved {len(done.entries)} packages from {len(pins)} pins "
                           f"for {note}", "nothing to do", _SOURCE), platform=platform)]
    out += [replace(finding("warning", "resolve-sdist-only", f"{pin} has no wheel for {note}, only an sdist: pip "
                            "builds it at install (a compiler, and what it links, in the image)",
                            f"pin a release of {pin.split('==')[0]} with an aarch64 wheel, or give the build what "
                            "it needs", _SOURCE), platform=platform) for pin in done.sdists]
    return out


_SOURCE = "uv pip compile --python-platform (https://docs.astral.sh/uv/pip/compile/)"
