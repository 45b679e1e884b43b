"""`envgen build` for a profile with several platforms: check -> render once -> one buildx build for every platform,
pushed as one manifest list -> the probe's library tier in each platform's image (the foreign ones under QEMU) ->
a validation record per platform image -> each image sealed and the index pushed again naming the sealed images
(``pipeline/platform_seal.py``) -> a signed attestation per platform image, pushed beside it.

What differs from a one-platform build: the images live in the registry (a multi-platform build cannot be loaded
into a classic image store), so the registry is required; the GPU tier runs only where the platform is the host's
and a GPU is lent (no arm64 GPU is lent to these machines: arm64 images are proved to the library tier alone).
Each platform's signed statement (``attest_platform``) has for subject that platform's sealed image (config digest,
layers, manifest digest in the index) and for predicate the validation with the platform, whether it ran emulated
and the GPU tier's state; `envgen pull` verifies it by digest (``pipeline/publish.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.config import load_config
from envgen.docker import BuilderInfo, ProgressSink, connect, detect_builder, run_container
from envgen.docker.engine import engine_info
from envgen.docker.multiplatform import (
    MultiPlatformResult,
    PlatformImage,
    build_multiplatform,
    check_platforms,
    host_platform,
    require_emulation,
)
from envgen.errors import InputError
from envgen.pipeline.build import plan_to_build
from envgen.pipeline.context import write_for_builder
from envgen.pipeline.publish import registry_to_use, remote_ref
from envgen.pipeline.session import Session
from envgen.pipeline.smoke import record_result, smoke_command
from envgen.pipeline.state import ValidationStore
from envgen.plan.installers import installer_of
from envgen.profile import Profile
from envgen.render import RenderResult, render_in_memory
from envgen.render.core import image_tag
from envgen.smoke.report import SmokeReport
from envgen.vocabulary import LABEL_FREEZE_SHA256, LABEL_PROFILE_HASH

if TYPE_CHECKING:
    from docker import DockerClient

LIBRARY_TIER_TIMEOUT_S = 1200.0  # the probe under QEMU: Python's start and imports run ~5-20x slower


@dataclass
class PlatformsOutcome:
    profile: str
    built: MultiPlatformResult
    reports: dict[str, SmokeReport] = field(default_factory=dict)  # platform -> its library tier's report
    attested: dict[str, str] = field(default_factory=dict)  # platform -> where its signed attestation was pushed
    unsealed: tuple[PlatformImage, ...] = ()  # the images the probe ran in, before their seal
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"built {self.profile} for {len(self.built.images)} platforms in {self.built.duration_s:.0f}s: "
                 f"{self.built.ref}@{self.built.index_digest}"]
        for image in self.built.images:
            report = self.reports.get(image.platform)
            verdict = "not smoke-tested" if report is None else \
                f"library tier {'passed' if report.passed else 'FAILED'}"
            attested = self.attested.get(image.platform)
            verdict += f"; signed attestation: {attested}" if attested else ""
            lines.append(f"  {image.platform}: {image.digest} ({verdict})")
        return "\n".join(lines + [f"  {note}" for note in self.notes])


def several_platforms(ref: str, env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The profile's platforms when its build is a multi-platform one (more than one, or not the host's alone);
    None for the one-platform build of the host's platform."""
    from envgen.profile import load_profile

    platforms = tuple(load_profile(ref, env).platforms)
    return None if platforms == (host_platform(),) else platforms


def refuse_split_lock(profile: Profile, platforms: Sequence[str]) -> None:
    """A pip lock that holds no set for one of the build's platforms: that platform would install another
    platform's wheels (their hashes and tags would not match). One line naming the platform and the fix. A lock with
    each platform's set is rendered per platform (requirements.<TARGETARCH>.lock, ``plan.lock_platforms``)."""
    from envgen.plan.lock_platforms import locked_platforms
    from envgen.plan.lockfile import lock_path
    from envgen.profile.loader import profile_arg, profile_source

    source = profile_source(profile)
    path = lock_path(source) if source is not None and not installer_of(profile).conda_env else None
    if path is None or not path.is_file():
        return
    held = locked_platforms(path)
    for platform in (p for p in platforms if p not in held):
        raise InputError(f"the lock {path.name} has no set for {platform} (it holds {', '.join(held)})",
                         fix=f"run `envgen lock {profile_arg(profile)} --platform {platform}`, or build "
                             f"{' '.join(held)} alone")


def refuse_options(*, builder: str | None, wheelhouse: Path | None, offline: bool, compression: str = "gzip") -> None:
    """The options of a one-platform build a multi-platform build has no use for: one line naming it."""
    given = [name for name, value in (("--builder classic", builder == "classic"),
                                      ("--wheelhouse", wheelhouse is not None), ("--offline", offline),
                                      (f"--compression {compression}", compression != "gzip")) if value]
    if given:
        raise InputError(f"{given[0]} is not available for a profile with several platforms (each platform's "
                         "wheels are downloaded inside its own build)",
                         fix="drop the option, or build one platform: platforms: [linux/amd64]")


@dataclass(frozen=True)
class Prepared:
    """A profile checked and rendered once for a multi-platform build: its context, the builder and where it goes."""
    profile: str
    content_hash: str
    context: RenderResult
    builder: BuilderInfo
    ref: str  # REGISTRY/PROFILE:HASH, the index's tag (publish.remote_ref: the name `envgen push` gives)
    log_dir: Path
    log_name: str


def prepare_platforms(ref: str, *, registry: str | None = None, echo: Callable[[str], None] = lambda _line: None,
                      env: Mapping[str, str] | None = None, check: bool = True,
                      platforms: Sequence[str] = (), session: Session | None = None) -> Prepared:
    """Check and render profile ``ref`` once (the same CA-bundle secret and proxy arguments as any build); the
    context is shared by every platform, which pip and apt resolve inside their own emulated build."""
    config = load_config(env)
    target = registry_to_use(registry, config)
    kb = Session.of(session, env).kb  # the command's one KB load (check's cache), as every other route
    plan = plan_to_build(ref, kb, check, env, echo)
    profile = plan.profile
    refuse_split_lock(profile, platforms)
    info = detect_builder(env, choice="buildkit", engine=engine_info(connect()))
    planned = render_in_memory(plan, config)
    log_dir, context_dir = config.state_dir / "logs", config.state_dir / "contexts" / f"{profile.name}-platforms"
    written, log_name = write_for_builder(planned, config, info, context_dir, log_dir=log_dir, echo=echo)
    pushed_as = remote_ref(target, image_tag(profile.name, written.content_hash, config.namespace))
    return Prepared(profile.name, written.content_hash, written, info, pushed_as, log_dir, log_name)


def build_prepared(prepared: Prepared, platforms: Sequence[str], *, sink: ProgressSink | None = None,
                   env: Mapping[str, str] | None = None, no_cache: bool = False,
                   build_args: Mapping[str, str] | None = None, suffix: str = "") -> MultiPlatformResult:
    """One buildx build of the prepared context for ``platforms``, pushed as one index (``suffix``: a tag and log
    of its own, for benchmarks that build the same context several times)."""
    written, log_path = prepared.context, prepared.log_dir / f"{prepared.log_name}{suffix}.log"
    return build_multiplatform(written.dir, builder=prepared.builder, platforms=platforms,
                               ref=prepared.ref + suffix, log_path=log_path,
                               secrets={k: Path(v) for k, v in written.secrets.items()},
                               build_args={**written.build_args, **(build_args or {})}, progress=sink, env=env,
                               no_cache=no_cache)


def build_platforms(ref: str, platforms: Sequence[str], *, registry: str | None = None, smoke: bool = True,
                    sink: ProgressSink | None = None, echo: Callable[[str], None] = lambda _line: None,
                    env: Mapping[str, str] | None = None, check: bool = True,
                    session: Session | None = None) -> PlatformsOutcome:
    """Build profile ``ref`` for ``platforms`` into one manifest list in ``registry`` (or the config's); with
    ``smoke``, the library tier of each platform's image is run and recorded."""
    wanted = check_platforms(platforms)
    require_emulation(wanted)
    prepared = prepare_platforms(ref, registry=registry, echo=echo, env=env, check=check, platforms=wanted,
                                 session=session)
    built = build_prepared(prepared, wanted, sink=sink, env=env)
    outcome = PlatformsOutcome(prepared.profile, built)
    echo(f"pushed {built.ref} as {built.index_digest}: "
         + ", ".join(f"{i.platform} {i.digest[:19]}" for i in built.images))
    if smoke:
        prove_platforms(outcome, prepared, load_config(env).state_dir)
        outcome.notes.append(gpu_tier_note(wanted))
    return outcome


def prove_platforms(outcome: PlatformsOutcome, prepared: Prepared, state_dir: Path) -> None:
    """The library tier in each platform's image, recorded; when every platform passed, each image sealed and the
    index pushed again naming the sealed ones (``pipeline/platform_seal.py``); each pass signed and pushed beside
    its image."""
    from envgen.pipeline.platform_seal import seal_platforms

    client, built = connect(), outcome.built
    store = ValidationStore(state_dir)
    for image in built.images:
        outcome.reports[image.platform] = library_tier(client, built.by_digest(image), image.platform, store,
                                                       prepared.profile, prepared.content_hash)
    local: dict[str, str] = {}
    if all(report.passed for report in outcome.reports.values()):
        outcome.unsealed = built.images
        outcome.built, local = seal_platforms(client, built, outcome.reports, store)
        outcome.notes.append(f"sealed: each platform's image carries its verdict and package list; the index is "
                             f"now {outcome.built.index_digest}")
    for image in outcome.built.images:
        if outcome.reports[image.platform].passed:
            outcome.attested[image.platform] = attest_platform(client, state_dir, outcome.built, image,
                                                               local.get(image.platform))


def attest_platform(client: DockerClient, state_dir: Path, built: MultiPlatformResult, image: PlatformImage,
                    local_id: str | None = None) -> str:
    """Sign the recorded pass of one platform's image (``local_id``: its ID here, else looked up by digest): a
    statement whose subject is that image's config digest, layers and manifest digest in the index, and whose
    predicate adds the platform, whether it ran emulated and the GPU tier's state; kept in the state dir and
    pushed beside that manifest. Where it went."""
    from envgen.docker import inspect_image
    from envgen.docker.oci import image_manifest, push_attestation
    from envgen.errors import ImageNotValidated
    from envgen.pipeline.attest import PREDICATE_TYPE, AttestationStore, predicate, sign, statement
    from envgen.pipeline.keys import signing_key
    from envgen.pipeline.publish import MANIFEST_SUBJECT

    ref = built.by_digest(image)
    local = inspect_image(client, local_id or ref)
    record = ValidationStore(state_dir).get(local.id) if local is not None else None
    if local is None or record is None or not record.passed:
        raise ImageNotValidated(f"{ref} ({image.platform}) has no passing validation here, so it is not signed",
                                fix="build the profile again")
    digest, body = image_manifest(ref)
    config_digest = str((json.loads(body).get("config") or {}).get("digest") or "")
    facts = predicate(profile=record.profile, profile_hash=local.labels.get(LABEL_PROFILE_HASH, ""),
                      content_hash=record.content_hash, freeze_sha256=local.labels.get(LABEL_FREEZE_SHA256, ""),
                      report=record.report, tier=record.tier, validated_at=record.checked_at)
    facts.update(platform=image.platform, emulated=image.platform != host_platform(),
                 gpu_tier=gpu_tier_state(image.platform))
    key = signing_key(state_dir)
    envelope = sign(statement(config_digest, local.layers, facts, {MANIFEST_SUBJECT: digest}), key.private,
                    key.keyid)
    AttestationStore(state_dir).add(local.id, [envelope])
    return push_attestation(built.ref, digest, body, json.dumps(envelope, sort_keys=True).encode(), PREDICATE_TYPE)


def gpu_tier_state(platform: str) -> str:
    """The GPU tier's state as a platform's statement says it."""
    if platform != host_platform():
        return (f"not run: no {platform} GPU is lent to the building host (emulation runs CPU code only); "
                "proved: the library tier")
    return "not run at build: the first `envgen pull` or `envgen run` on a GPU host runs it"


def library_tier(client: DockerClient, image: str, platform: str, store: ValidationStore, profile_name: str,
                 content_hash: str, timeout_s: float = LIBRARY_TIER_TIMEOUT_S) -> SmokeReport:
    """The probe's library tier in one platform's image (pulled by digest; a foreign platform runs under QEMU),
    recorded against that image."""
    from envgen.docker.push_pull import pull_image

    pull_image(client, image, platform=platform)
    result = run_container(client, image, smoke_command("libraries"), platform=platform, timeout_s=timeout_s)
    return record_result(client, image, result, timeout_s=timeout_s, store=store, profile_name=profile_name,
                         content_hash=content_hash)


def gpu_tier_note(platforms: Sequence[str]) -> str:
    """What was not proved: the GPU tier of the platforms that are not the host's."""
    foreign = [p for p in platforms if p != host_platform()]
    if not foreign:
        return "GPU tier: run it with `envgen smoke` on a GPU host"
    return (f"GPU tier not run for {', '.join(foreign)}: it needs a GPU of that platform and none is lent here "
            "(emulation runs CPU code only); proved: the library tier")
