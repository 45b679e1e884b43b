"""What the render would refuse, said by check first (``plan.refusals``: the same message and fix): a profile env
variable that replaces one of envgen's, a base whose own environment occupies envgen's /opt/env, and a packages.pip
line asking for another version of a distribution the base holds (base_provides.packages). The lock file's
refusals are check.lock.lockfile's (lock-stale)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.plan.base import base_refusals
from envgen.plan.refusals import Refused, env_collisions
from envgen.plan.requirements import provided_conflicts

_SOURCE = "envgen.plan.refusals (the render refuses the same)"


def _findings(found: list[Refused], source: str) -> list[Finding]:
    return [finding("error", r.code, r.message, r.fix, source) for r in found]


def env_replaces_envgen(ctx: CheckContext) -> list[Finding]:
    return _findings(env_collisions(ctx.plan.own_env, ctx.profile.env), _SOURCE)


def base_env_collision(ctx: CheckContext) -> list[Finding]:
    return _findings(base_refusals(ctx.profile, ctx.kb), ctx.plan.family.cite())


def base_provides_conflict(ctx: CheckContext) -> list[Finding]:
    return _findings(provided_conflicts(ctx.plan.requirements), "profile: base_provides.packages (the render refuses "
                     "the same)")


RULES = (env_replaces_envgen, base_env_collision, base_provides_conflict)
