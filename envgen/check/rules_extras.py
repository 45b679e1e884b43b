"""packages.pip against the environment layer: an unlocked build installs the extras with the environment's own
versions as constraints (templates/sh/extras.sh), so an extra that pins another version of a tool the
environment holds (the venv's pip, setuptools, wheel) cannot be built; said here, before the build."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding

# What `python3 -m venv` puts into /opt/env besides the interpreter (ensurepip): the environment layer's own.
VENV_TOOLS = ("pip", "setuptools", "wheel")
_SOURCE = "https://docs.python.org/3/library/venv.html (ensurepip installs pip, and setuptools before 3.12)"


def extra_moves_tool(ctx: CheckContext) -> list[Finding]:
    profile = ctx.profile
    if profile.installer != "pip" or not profile.packages.pip:
        return []
    from envgen.plan.lockfile import lock_path
    from envgen.profile.loader import profile_arg, profile_source

    source = profile_source(profile)
    if source is not None and lock_path(source).is_file():
        return []  # a lock resolves the environment and the extras together
    out = []
    for line in (r.line for r in ctx.plan.requirements if r.applies and r.stage == "extras"):
        name, pin = line.name, line.requirement
        if name in VENV_TOOLS:
            out.append(finding(
                "error", "extra-moves-env-tool",
                f"packages.pip names {pin}, a tool the environment layer already holds (the "
                f"venv of the base's Python): an unlocked build installs the extras with the environment's own "
                f"versions as constraints, so this pin fails the build",
                f"drop {name} from packages.pip (the environment keeps its own), or lock the profile "
                f"(`envgen lock {profile_arg(profile)}`): a lock resolves both sets together",
                _SOURCE))
    return out


RULES = [extra_moves_tool]
