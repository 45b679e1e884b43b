"""`envgen doctor` and the gate `envgen run` passes first: real host facts against profiles."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envgen.errors import EnvgenError
from envgen.host import RealProvider, collect
from envgen.host.doctor import DoctorReport, doctor
from envgen.host.gate import gate
from envgen.host.model import HostFacts
from envgen.host.report import format_report
from envgen.kb import load_kb
from envgen.profile import Profile, list_profiles, load_profile
from envgen.vocabulary import LABEL_PROFILE


@dataclass(frozen=True)
class DoctorOutput:
    report: DoctorReport

    def to_json(self) -> str:
        return json.dumps(self.report.to_json(), indent=2, sort_keys=True)

    def table(self) -> str:
        return format_report(self.report)


def doctor_report(profile: str | None = None, env: Mapping[str, str] | None = None) -> DoctorOutput:
    kb = load_kb()
    facts = collect(RealProvider(env), kb)
    refs = [profile] if profile else [source.name for source in list_profiles(env)]
    profiles: list[Profile] = []
    for ref in refs:
        try:
            profiles.append(load_profile(ref, env))
        except EnvgenError:
            if profile:  # the one the user asked for: say why
                raise
    return DoctorOutput(doctor(facts, profiles, kb))


def gate_image(labels: Mapping[str, str], env: Mapping[str, str] | None = None, *, facts: HostFacts | None = None,
               kb: Any = None) -> Any:
    """Check this host against the profile an image was built from (by its label), before starting it.
    An image whose profile is not known here is let through: the engine's own errors are translated.
    ``facts``: the host facts already read (else they are read here)."""
    name = labels.get(LABEL_PROFILE)
    if not name:
        return None
    try:
        profile = load_profile(name, env)
    except EnvgenError:
        return None
    kb = kb if kb is not None else load_kb()
    return gate(facts if facts is not None else collect(RealProvider(env), kb), profile, kb)
