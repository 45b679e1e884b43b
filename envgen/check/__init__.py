"""`envgen check`: rules over (Profile, KnowledgeBase, HostSpec) -> findings; and the resolved stack."""

from __future__ import annotations

from envgen.check.context import CheckContext, build_context
from envgen.check.findings import SEVERITY_ORDER, Finding, HostSpec
from envgen.check.registry import RULES
from envgen.check.report import findings_to_json, format_findings, has_errors
from envgen.check.stack import ResolvedStack, resolve_stack
from envgen.kb import KnowledgeBase
from envgen.profile import Profile


def check_profile(profile: Profile, kb: KnowledgeBase, host: HostSpec | None = None) -> list[Finding]:
    """Every finding, errors first; duplicates (same code and message) once."""
    ctx = build_context(profile, kb, host)
    seen: set[tuple[str, str]] = set()
    out: list[Finding] = []
    for rule in RULES:
        for f in rule(ctx):
            if (f.code, f.message) not in seen:
                seen.add((f.code, f.message))
                out.append(f)
    return sorted(out, key=lambda f: SEVERITY_ORDER[f.severity])


__all__ = [
    "CheckContext",
    "Finding",
    "HostSpec",
    "ResolvedStack",
    "check_profile",
    "findings_to_json",
    "format_findings",
    "has_errors",
    "resolve_stack",
]
