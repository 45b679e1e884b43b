"""The profile's platforms (``platforms: [linux/amd64, linux/arm64]``): what the image installs must exist for each.

The knowledge base's x86-64 tables are what every other rule reads; for linux/arm64 these rules read
platform_wheels.yaml (which releases have manylinux aarch64 wheels on PyPI, and with which CUDA, read from the
wheels by ``tools.kbrefresh.platform_wheels``) and gpu_refusals.yaml (Jetson: its own world, L4T/JetPack).
A pin with no aarch64 wheel, or a GPU profile whose framework's aarch64 wheel is a CPU build, is an error naming the
platform and what exists instead: the nearest releases that have one, else a source build."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.platforms import PlatformWheel
from envgen.plan.installers import installer_of
from envgen.plan.platforms import exact_pins

if TYPE_CHECKING:
    from packaging.version import Version

ARM64 = "linux/arm64"


def gpu_refused(ctx: CheckContext) -> list[Finding]:
    """A GPU target envgen does not plan for (Jetson), with the reason."""
    out = []
    for target in ctx.targets:
        row = next((r for r in ctx.kb.gpu_refusals if r.matches(target.label)), None)
        if row is not None:
            out.append(finding("error", "gpu-refused", f"{target.label}: {row.reason}", row.instead, row.cite()))
    return out


def _version(text: str) -> Version:
    from packaging.version import InvalidVersion, Version  # not on a check's path without linux/arm64

    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def _usable(row: PlatformWheel, python: str, gpu: bool) -> bool:
    return row.serves(python) and not (gpu and row.framework and row.cuda is None)


def _label(row: PlatformWheel) -> str:
    if not row.framework:
        return row.version
    return f"{row.version} (CUDA {row.cuda})" if row.cuda else f"{row.version} (CPU build)"


def nearest(rows: list[PlatformWheel], version: str, python: str, gpu: bool) -> str:
    """The releases nearest ``version`` (the newest older one, the oldest newer one) that have an aarch64 wheel for
    ``python`` (and, for a GPU profile's framework, a CUDA build); else what remains: a source build."""
    usable = sorted((r for r in rows if _usable(r, python, gpu)), key=lambda r: _version(r.version))
    older = [r for r in usable if _version(r.version) < _version(version)]
    newer = [r for r in usable if _version(r.version) > _version(version)]
    picked = ([older[-1]] if older else []) + ([newer[0]] if newer else [])
    if picked:
        return " or ".join(_label(r) for r in picked)
    return ""


def _problem(row: PlatformWheel, python: str, gpu: bool) -> str:
    """Why ``row`` does not serve the image, or ""."""
    if not row.python:
        return "has no manylinux aarch64 wheel on PyPI"
    if not row.serves(python):
        return f"has manylinux aarch64 wheels for CPython {', '.join(row.python)} only, not {python}"
    if gpu and row.framework and row.cuda is None:
        return f"has a manylinux aarch64 wheel on PyPI, but not a CUDA build ({row.cuda_read})"
    return ""


def arm64_wheels(ctx: CheckContext) -> list[Finding]:
    """Each exact pin the KB has linux/arm64 rows for: an aarch64 wheel for the image's Python (a CUDA build for a
    GPU profile's framework), else an error naming what exists instead."""
    if ARM64 not in ctx.profile.platforms:
        return []
    python, out = ctx.profile.python_minor, []
    for name, version in exact_pins(ctx.plan):
        rows = [r for r in ctx.kb.platform_wheels if r.name == name and r.platform == ARM64]
        row = next((r for r in rows if _version(r.version) == _version(version)), None)
        if row is None:
            continue  # a release or name platform_wheels.yaml does not hold: uv's resolve for aarch64 judges it
        gpu = ctx.gpu and row.framework
        why = _problem(row, python, gpu)
        if not why:
            out += _kernels(ctx, row) if gpu else []
            continue
        instead = nearest(rows, version, python, gpu)
        fix = (f"pin {name}=={instead.split(' ')[0]} for {ARM64} (the nearest releases with one: {instead}; a CUDA"
               " other than the profile's means its cuda: changes too)" if instead else
               f"no release of {name} in platform_wheels.yaml has one{' with CUDA' if gpu else ''} for CPython "
               f"{python}: build it from source for aarch64 (a compiler{' and the CUDA toolkit' if gpu else ''} in "
               f"the image), use a distribution that publishes aarch64 wheels, or drop {ARM64} from platforms")
        out.append(replace(finding("error", "platform-no-wheel", f"{name}=={version} {why}", fix,
                                   row.cite()), platform=ARM64))
    return out


def _kernels(ctx: CheckContext, row: PlatformWheel) -> list[Finding]:
    """Each GPU target the aarch64 CUDA build has no code for (its cubins and PTX read from the wheel, when read)."""
    from envgen.kb.builds import kernel_coverage

    if not row.arch_list:
        return []
    out = []
    for target in ctx.targets:
        model = target.model
        if model is not None and kernel_coverage(model.compute_capability, row.arch_list, row.ptx) == "none":
            out.append(replace(finding(
                "error", "platform-no-kernel",
                f"{row.name}=={row.version}'s aarch64 wheel has no kernel image for {target.label} "
                f"({model.sm}): its code is {', '.join(row.arch_list + row.ptx)}",
                f"choose a {row.name} release whose aarch64 build carries {model.sm} (or PTX at or below it)",
                f"{row.cite()}; {row.arch_source}"), platform=ARM64))
    return out


def lock_platforms(ctx: CheckContext) -> list[Finding]:
    """A pip lock beside the profile that holds no set for one of its platforms (a lock without platform blocks is
    linux/amd64's alone, ``envgen.plan.lock_platforms``)."""
    from envgen.profile.loader import profile_arg, profile_source

    source = profile_source(ctx.profile)
    if source is None or installer_of(ctx.profile).conda_env or ctx.profile.platforms == ["linux/amd64"]:
        return []
    from envgen.plan.lock_platforms import locked_platforms
    from envgen.plan.lockfile import lock_path

    path = lock_path(source)
    if not path.is_file():
        return []  # lock-missing says so
    held = locked_platforms(path)
    return [replace(finding(
        "warning", "lock-platform-missing",
        f"the lock {path.name} holds no set for {platform} (it holds {', '.join(held)}): a {platform} build "
        "resolves its packages at build time, so a later build can differ",
        f"run `envgen lock {profile_arg(ctx.profile)}` again: it resolves every platform of the profile", _LOCK_SOURCE),
        platform=platform) for platform in ctx.profile.platforms if platform not in held]


_LOCK_SOURCE = "envgen lock: <profile>.lock.txt, a [platform ...] block per platform but linux/amd64 (README, Locking)"
RULES = [gpu_refused, arm64_wheels, lock_platforms]
