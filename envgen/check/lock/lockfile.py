"""Locks: a profile built without a lock (or with one made for other inputs) is not reproducible.

Reads the lock file beside the profile's YAML file (``<profile>.lock.txt``, written by `envgen lock`)
and compares what it was made from with what the profile says now. The render refuses a stale lock
outright; here it is a warning, so `check` shows it before anything is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding

if TYPE_CHECKING:
    from envgen.errors import InputError
    from envgen.plan.lockfile import Lock

_SOURCE = "envgen lock: <profile>.lock.txt (conda: <profile>.conda.txt) beside the profile (README, Locking)"


@dataclass(frozen=True)
class _LockRead:
    path: Path
    lock: Lock | None  # None: no lock file, or one made for other inputs
    stale: str | None = None  # why a lock file there does not match the profile
    refused: InputError | None = None  # a lock file the render refuses outright (lock-not-pip, lock-target)
    code: str = "lock-not-pip"


def _read_lock(ctx: CheckContext) -> _LockRead | None:
    """The lock beside a profile's YAML file, checked against the profile (a conda profile's only for being there);
    None for a profile made in code. The lock file format is imported only where a profile has a file (~5 ms of a
    `check`)."""
    from envgen.profile.loader import profile_source

    source = profile_source(ctx.profile)
    if source is None:
        return None
    from envgen.errors import InputError
    from envgen.plan.base import lock_target_refusals
    from envgen.plan.installers import installer_of
    from envgen.plan.lockfile import check_inputs, lock_not_pip, lock_path, read_lock

    path = lock_path(source, ctx.profile.installer)
    if not installer_of(ctx.profile).pip_lock:
        pip_lock = lock_path(source)
        if pip_lock.is_file():  # a pip lock beside a conda profile: the render refuses it
            return _LockRead(pip_lock, None, refused=lock_not_pip(pip_lock, ctx.profile))
        # no conda lock: lock-missing; one there is judged by conda_lock_state (plan.condalock)
        return None if path.is_file() else _LockRead(path, None)
    if not path.is_file():
        return _LockRead(path, None)
    try:
        lock = read_lock(path)
        check_inputs(lock, ctx.profile, ctx.plan.framework_pip, lock.inputs.apt or ())
    except InputError as exc:
        return _LockRead(path, None, exc.message)
    target = lock_target_refusals(lock.field("target"), str(lock.path or "lock"), ctx.profile, ctx.kb)
    if target:
        return _LockRead(path, None, refused=target[0].error(), code=target[0].code)
    return _LockRead(path, lock)


def conda_lock_state(ctx: CheckContext) -> list[Finding]:
    """The conda lock beside a conda profile: what the render would refuse in it (plan.condalock)."""
    from envgen.plan.installers import installer_of

    if not installer_of(ctx.profile).conda_env:
        return []
    from envgen.plan.condalock import conda_lock_refusals

    return [finding("error", r.code, r.message, r.fix, _SOURCE) for r in conda_lock_refusals(ctx.profile,
                                                                                             ctx.plan.user_conda)]


def lock_state(ctx: CheckContext) -> list[Finding]:
    read = _read_lock(ctx)
    if read is None:
        return []
    from envgen.profile.loader import profile_arg

    profile, path = ctx.profile, read.path
    command = f"envgen lock {profile_arg(profile)}"
    if read.refused is not None:
        return [finding("error", read.code, read.refused.message, read.refused.fix or "", _SOURCE)]
    if read.stale is not None:
        return [finding("warning", "lock-stale", f"{read.stale}: the build will refuse this lock",
                        f"run `{command}` again", _SOURCE)]
    if read.lock is None:
        from envgen.plan.installers import installer_of

        why, needs = installer_of(profile).lock_missing
        return [finding("warning", "lock-missing",
                        f"profile {profile.name} has no lock ({path.name}): {why}, so a later build can differ",
                        f"run `{command}` ({needs})", _SOURCE)]
    if read.lock.inputs.base is None:
        return [finding("warning", "lock-old-format",
                        f"{path.name} pins pip packages only (format 1): the base image and apt packages float",
                        f"run `{command}` again", _SOURCE)]
    if read.lock.base_image_id:  # a locally made base (debootstrap): its ID is the machine's that locked it
        return [finding("info", "lock-local-base",
                        f"{path.name} pins the local base {profile.base} as image {read.lock.base_image_id[:19]}, "
                        "made where the lock was written; a base made on another machine (scripts/make-base-image) "
                        "has another ID: the build says so and goes on, and the lock's apt and pip pins still decide "
                        "what the image holds",
                        f"nothing to do; `{command}` on this machine pins its own base", _SOURCE)]
    return []


def _locked_versions(ctx: CheckContext) -> tuple[dict[str, str], str] | None:
    """name -> version of a current lock beside the profile, and its file name; None without one (or a stale one)."""
    read = _read_lock(ctx)
    if read is None or read.lock is None:
        return None
    return {e.name: e.version for e in (*read.lock.environment, *read.lock.extras)}, read.path.name


def floating_lines(ctx: CheckContext) -> list[Finding]:
    """Each packages.pip line that floats (a range, an unpinned name): what pins it (a current lock), or that the
    build resolves it the day it runs; and each line whose marker leaves it out of the image."""
    from envgen.check.packages.installs import floating
    from envgen.profile.loader import profile_arg

    out = [finding("info", "pip-marker-skips",
                   f"packages.pip line {line.text!r}: its marker does not hold in the image (CPython "
                   f"{ctx.profile.python_version} on Linux x86-64), so pip skips it", "nothing to do, or drop the line",
                   "https://packaging.python.org/en/latest/specifications/dependency-specifiers/#environment-markers")
           for line in (r.line for r in ctx.plan.requirements if not r.applies)]
    floats = floating(ctx)
    if not floats:
        return out
    locked = _locked_versions(ctx)
    arg = profile_arg(ctx.profile)
    resolve = f"`envgen check {arg} --resolve` shows what it resolves to today"
    for item in floats.values():
        what = f"packages.pip line {item.line.text!r} floats ({'a range' if item.spec else 'no version given'})"
        if locked is None and ctx.kb.extension(item.name) is not None:
            out.append(finding("warning", "ext-floating",
                               f"{what}: {item.name} is a GPU extension package, judged per release (its kernels' "
                               "GPUs, its CUDA build, the torch it was built for, wheel or source build): a range "
                               "is judged only once it is pinned, and the build resolves it the day it runs",
                               f"{resolve}; pin that release ({item.line.raw_name}{item.line.extras_text}==X.Y.Z) or "
                               f"run `envgen lock {arg}`, and check judges it",
                               "extensions.yaml (envgen/kb/data): rows per release"))
            continue
        if locked is not None and item.name in locked[0]:
            out.append(finding("info", "pip-floating", f"{what}: the lock pins {item.name}=={locked[0][item.name]} "
                               f"({locked[1]})", f"nothing to do; `envgen lock {arg}` again moves it "
                               "to the newest release the line allows", _SOURCE))
            continue
        out.append(finding("warning", "pip-floating",
                           f"{what}: without a lock the build resolves it the day it runs (the newest release the "
                           "line allows), so two builds can differ",
                           f"run `envgen lock {arg}` to pin what it resolves to, or pin it with ==; "
                           f"{resolve}", _SOURCE))
    return out


RULES = (lock_state, conda_lock_state, floating_lines)
