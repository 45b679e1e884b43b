"""`envgen check`: rules over (Profile, KnowledgeBase, HostSpec) -> findings, judging the install plan
(``envgen.plan``) the render writes."""

from __future__ import annotations

from dataclasses import replace

from envgen.check.base.provided import moot
from envgen.check.context import CheckContext, build_context
from envgen.check.findings import SEVERITY_ORDER, Finding, HostSpec
from envgen.check.report import findings_to_json, format_findings, has_errors
from envgen.check.rules import RULES
from envgen.kb import KnowledgeBase
from envgen.plan.image import ImagePlan, plan_image  # the plan the check judges (envgen.plan), for its callers
from envgen.profile import Profile


def check_profile(profile: Profile, kb: KnowledgeBase, host: HostSpec | None = None,
                  plan: ImagePlan | None = None) -> list[Finding]:
    """Every finding, errors first; duplicates (same code and message) once. An error that rests on an
    ``unverified`` knowledge-base row alone is reported as a warning that says so. ``plan``: the profile's plan,
    when the caller made it already (a build renders the same one)."""
    return judge(build_context(profile, kb, host, plan))


def judge(ctx: CheckContext) -> list[Finding]:
    """``check_profile`` over a context already built (`envgen check` builds one and prints its scope too)."""
    unverified = ctx.kb.unverified_cites
    seen: set[tuple[str, str]] = set()
    out: list[Finding] = []
    # a profile of several platforms: a finding no rule gave a platform is about all of them
    every = ", ".join(ctx.profile.platforms) if len(ctx.profile.platforms) > 1 else ""
    for rule in RULES:
        for f in rule(ctx):
            f = replace(f, platform=f.platform or every) if every else f
            if (f.code, f.platform + f.message) not in seen and not moot(f, ctx):
                seen.add((f.code, f.platform + f.message))
                soft = f.severity == "error" and f.source in unverified and f.code not in _FROM_REFERENCE
                out.append(_soften(f) if soft else f)
    return sorted(out, key=lambda f: SEVERITY_ORDER[f.severity])


# facts read from the image reference itself (the tag names its CUDA and cuDNN), not from the row they cite
_FROM_REFERENCE = frozenset({"base-cuda-mismatch", "base-cudnn-mismatch"})


def _soften(f: Finding) -> Finding:
    return replace(f, severity="warning",
                   message=f"{f.message} (a warning, not an error: the knowledge-base row is unverified)")


__all__ = [
    "CheckContext",
    "Finding",
    "HostSpec",
    "check_profile",
    "findings_to_json",
    "format_findings",
    "has_errors",
    "build_context",
    "judge",
    "ImagePlan",
    "plan_image",
]
