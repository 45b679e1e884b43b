"""`envgen doctor` and the gate `envgen run` passes first: real host facts against profiles."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen.errors import EnvgenError
from envgen.host import RealProvider, collect
from envgen.host.doctor import DoctorReport, Reason, doctor
from envgen.host.gate import gate
from envgen.host.model import HostFacts
from envgen.host.report import format_report
from envgen.pipeline.session import Session
from envgen.profile import Profile, list_profiles, load_profile
from envgen.vocabulary import LABEL_PROFILE


@dataclass(frozen=True)
class DoctorOutput:
    report: DoctorReport

    def to_json(self) -> str:
        return json.dumps(self.report.to_json(), indent=2, sort_keys=True)

    def table(self) -> str:
        return format_report(self.report)


def doctor_report(profile: str | None = None, env: Mapping[str, str] | None = None,
                  session: Session | None = None) -> DoctorOutput:
    session = Session.of(session, env)
    env, kb = session.env, session.kb
    facts = collect(RealProvider(env), kb)
    refs = [profile] if profile else [source.name for source in list_profiles(env)]
    profiles: list[Profile] = []
    for ref in refs:
        try:
            profiles.append(load_profile(ref, env, kb=kb))
        except EnvgenError:
            if profile:  # the one the user asked for: say why
                raise
    plans = [_plan(profile, session) for profile in profiles]  # one per profile: the verdict and downloads read it
    report = doctor(facts, profiles, kb, plans)
    if facts.docker.reachable:
        report = _with_bases(report, profiles, plans, env)
    return DoctorOutput(report)


def _plan(profile: Profile, session: Session) -> Any:
    """The profile's plan (the command's one: ``session.plan_of``), or None where it cannot be planned (the check's
    verdict says why)."""
    try:
        return session.plan_of(profile)
    except EnvgenError:
        return None


def _with_bases(report: DoctorReport, profiles: list[Profile], plans: list[Any],
                env: Mapping[str, str] | None) -> DoctorReport:
    """Each verdict with whether this host can have the profile's base: a profile whose image is not here and whose
    base neither is here nor can be fetched does not run here, however well the GPU and driver fit."""
    from dataclasses import replace

    from envgen.config import load_config
    from envgen.docker import connect
    from envgen.host.doctor import verdict_of

    config = load_config(env)
    client = connect()
    try:
        verdicts = []
        for verdict, profile, plan in zip(report.verdicts, profiles, plans, strict=True):
            built = _here(client, f"{config.namespace}/{profile.name}:latest")  # its base and downloads not needed
            extra = [] if built else [*_base_reason(client, profile, config),
                                      *_download_reasons(profile, plan, config, env)]
            reasons = (*extra, *verdict.reasons)
            verdicts.append(replace(verdict, reasons=reasons, verdict=verdict_of(reasons)))
    finally:
        client.close()
    return replace(report, verdicts=tuple(verdicts))


def _here(client: Any, ref: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(ref)
        return True
    except ImageNotFound:
        return False


def _base_reason(client: Any, profile: Profile, config: Any) -> list[Reason]:
    from docker.errors import APIError, NotFound

    from envgen.config import merge_mirrors
    from envgen.mirrors import mirror_ref

    mirrored = mirror_ref(profile.base, merge_mirrors(profile.mirrors, config.mirrors).registries)
    ref = mirrored.ref if mirrored else profile.base
    if _here(client, ref):
        return []
    if profile.local_base:
        return [Reason("error", "base-missing", f"the local base {ref} is not on this engine",
                       "make it (scripts/make-base-image), or `docker load` it", "profile local_base")]
    try:
        client.images.get_registry_data(ref)
        return [Reason("info", "base-fetched", f"the build pulls the base {ref} (its registry answers)",
                       "nothing to do", "docker engine")]
    except (APIError, NotFound) as exc:
        detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:160]
        return [Reason("error", "base-unreachable", f"the base {ref} is not on this engine and its registry "
                       f"cannot be reached from here ({detail})",
                       "`docker load` the base (or `envgen load` a bundle of the image), name a registry mirror "
                       "(mirrors.registries), or build a profile on a base this engine has (`docker images`)",
                       "docker engine")]


def _download_reasons(profile: Profile, plan: Any, config: Any, env: Mapping[str, str] | None) -> list[Reason]:
    """What the profile's build downloads, tried from here (``pipeline.fetch``): an error for each one this host
    cannot reach, else one line saying it reached them."""
    from envgen.config import merge_mirrors
    from envgen.lock.wheels import configured_wheelhouse
    from envgen.pipeline.fetch import blocked, probe_for
    from envgen.render.downloads import downloads

    if plan is None:
        return []  # the check's verdict says why it cannot be planned
    wheelhouse = Path(config.mirrors.wheelhouse).expanduser() if config.mirrors.wheelhouse else \
        configured_wheelhouse(env)
    mirrors = merge_mirrors(profile.mirrors, config.mirrors)
    found = downloads(plan, mirrors, wheelhouse)
    failed = blocked(found, config.state_dir, probe_for(mirrors.http_proxy, mirrors.https_proxy))
    out = [Reason("warning" if d.index and wheelhouse else "error", "download-unreachable",
                  f"the build needs {d.line()}, which this host cannot reach ({why})",
                  f"route it ({d.route})" + (" or build with --wheelhouse DIR --offline" if d.pip else ""),
                  "render.downloads") for d, why in failed]
    reached = [d.line() for d in found if d not in {f for f, _ in failed}]
    if reached:
        out.append(Reason("info", "downloads-reached", "the build downloads from " + "; ".join(reached)
                          + ": each answers from here", "nothing to do", "render.downloads"))
    return out


def gate_image(labels: Mapping[str, str], session: Session, *, facts: HostFacts | None = None) -> Any:
    """Check this host against the profile an image was built from (by its label), before starting it, with the
    command's one plan of it (``session.plan_of``). An image whose profile is not known here is let through: the
    engine's own errors are translated. ``facts``: the host facts already read (else they are read here)."""
    name = labels.get(LABEL_PROFILE)
    if not name:
        return None
    profile = session.resolved.get(name)  # the image was looked up by this profile's tag: its profile object
    if profile is None:
        try:
            profile = session.resolved[name] = session_profile(name, session)
        except EnvgenError:
            return None
    kb = session.kb
    facts = facts if facts is not None else collect(RealProvider(session.env), kb)
    return gate(facts, profile, kb, session.plan_of(profile))


def session_profile(ref: str, session: Session) -> Profile:
    """The profile ``ref`` names, from the profile cache `envgen check` keeps (keyed by the KB's key: loading reads
    no KB)."""
    from envgen.profile.cache import load_profile_cached

    kb_key = session.kb_key
    return load_profile_cached(ref, session.cache_dir if kb_key else None, None, kb_key, session.env)
