"""Resolving the lock's sets for the profile's platforms other than linux/amd64 (their format:
``envgen.plan.lock_platforms``). Each set is resolved by uv for ``<arch>-manylinux_<glibc>`` (aarch64 beside x86_64),
wheels only, and each package keeps the wheel the image's CPython on that machine installs
(``lock_uv.choose_wheels``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from envgen.errors import BuildFailed, InputError
from envgen.lock.lock_uv import Resolved, uv_platform
from envgen.lock.wheels import manylinux_platforms
from envgen.plan.lock_platforms import ARCH, PlatformSet
from envgen.plan.lockfile import sorted_entries


def wheel_tags(glibc: str | None, platform: str) -> tuple[str, ...]:
    """The manylinux tags an image of ``platform`` with this glibc loads, newest first."""
    return tuple(tag.replace("x86_64", ARCH[platform]) for tag in manylinux_platforms(glibc))


Resolver = Callable[[list[str], str, tuple[str, ...]], Resolved]  # (pins, arch, wheel tags) -> the set


def resolve_platform(platform: str, pins: Sequence[str], extras: Sequence[str], python_minor: str,
                     glibc: str | None, resolve: Resolver, resolver_note: str) -> PlatformSet:
    """The environment set (``pins``) and what ``extras`` add, resolved for ``platform``: a set that has no wheel
    there is an error naming the platform."""
    arch, tags = ARCH[platform], wheel_tags(glibc, platform)
    try:
        environment = resolve(list(pins), arch, tags).entries
        combined = resolve([*pins, *extras], arch, tags).entries if extras else dict(environment)
    except (InputError, BuildFailed) as exc:  # no wheel there (choose_wheels), or uv found no set (its tail kept)
        raise InputError(f"{platform}: {exc.message}", fix=exc.fix or f"drop {platform} from platforms"
                         ).with_tail(exc.tail) from None
    added = sorted_entries(e for name, e in combined.items() if name not in environment)
    target = f"cp{python_minor.replace('.', '')}-{tags[0]}"
    return PlatformSet(platform, target, sorted_entries(environment.values()), added,
                       f"{resolver_note} --python-platform {uv_platform(glibc, arch)}")
