"""Locks: a profile built without a lock (or with one made for other inputs) is not reproducible.

Reads the lock file beside the profile's YAML file (``<profile>.lock.txt``, written by `envgen lock`)
and compares what it was made from with what the profile says now. The render refuses a stale lock
outright; here it is a warning, so `check` shows it before anything is built.
"""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding

_SOURCE = "envgen lock: <profile>.lock.txt beside the profile (README, Locking)"


def lock_state(ctx: CheckContext) -> list[Finding]:
    from envgen.profile.loader import profile_source

    profile = ctx.profile
    source = profile_source(profile)
    if source is None or profile.installer != "pip":
        return []
    # The lock file format is imported only where a pip profile has a lock to read (~5 ms of a `check`).
    from envgen.errors import InputError
    from envgen.profile.lockfile import check_inputs, lock_path, read_lock

    path = lock_path(source)
    command = f"envgen lock {profile.name}"
    if not path.is_file():
        return [finding("warning", "lock-missing",
                        f"profile {profile.name} has no lock ({path.name}): its base image, apt and pip packages "
                        "are resolved at build time, so a later build can differ",
                        f"run `{command}` (needs the package indexes and the Docker engine)", _SOURCE)]
    framework = ctx.plan.framework_pip
    try:
        lock = read_lock(path)
        check_inputs(lock, profile, framework, lock.inputs.apt or ())
    except InputError as exc:
        return [finding("warning", "lock-stale", f"{exc.message}: the build will refuse this lock",
                        f"run `{command}` again", _SOURCE)]
    if lock.inputs.base is None:
        return [finding("warning", "lock-old-format",
                        f"{path.name} pins pip packages only (format 1): the base image and apt packages float",
                        f"run `{command}` again", _SOURCE)]
    return []


RULES = (lock_state,)
