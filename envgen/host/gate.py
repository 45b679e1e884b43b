"""The run-time gate: before `envgen run` starts a container, the host facts are checked against the
image's profile with the doctor's rules; and the engine's own GPU errors are turned into the same sentences.
"""

from __future__ import annotations

from typing import Any

from envgen.errors import HostIncompatible
from envgen.host.doctor import ProfileVerdict, verdict_for
from envgen.host.engine_errors import translate_engine_error
from envgen.host.model import HostFacts

__all__ = ["gate", "translate_engine_error"]  # the engine's GPU refusals are worded in envgen.host.engine_errors


def gate(facts: HostFacts, profile: Any, kb: Any, plan: Any = None) -> ProfileVerdict:
    """Raise HostIncompatible when the doctor says the profile cannot run here; otherwise return the
    verdict (its warnings are for the caller to show). ``plan``: the profile's plan, where the caller made it."""
    verdict = verdict_for(facts, profile, kb, plan)
    if verdict.verdict != "cannot-run":
        return verdict
    errors = [r for r in verdict.reasons if r.severity == "error"]
    message = f"{profile.name} cannot run on this host: " + "; ".join(r.message for r in errors)
    fixes = []
    for reason in errors:
        if reason.fix and reason.fix not in fixes:
            fixes.append(reason.fix)
    raise HostIncompatible(message, fix="; ".join(fixes) or None)
