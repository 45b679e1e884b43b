"""`envgen build`: check -> render -> build -> smoke test -> seal -> tag -> (push).

Nothing is tagged until the image has been built (and, unless skipped, has passed its smoke
test), so an interrupted or failed build leaves no tag pointing at a half-made image.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envgen import layout
from envgen.config import UserConfig, merge_mirrors
from envgen.docker import (
    BuilderInfo,
    ProgressSink,
    build_image,
    connect,
    detect_builder,
    inspect_image,
    run_container,
)
from envgen.docker.build import known_compression, with_compression
from envgen.docker.engine import engine_info
from envgen.docker.images import tag_all
from envgen.errors import BuildFailed, InputError, SmokeFailed
from envgen.files import write_atomically
from envgen.imageref import parse_ref
from envgen.kb import KnowledgeBase
from envgen.mirrors import mirror_ref
from envgen.pipeline.buildlock import build_lock
from envgen.pipeline.context import ensure_planned_fetchable, wheelhouse_to_use, write_for_builder
from envgen.pipeline.mirrors import ensure_base_reachable, fetch_base
from envgen.pipeline.naming import alias_ref, image_ref
from envgen.pipeline.prepare import check_base_labels, checked_plan
from envgen.pipeline.seal import recompressed, seal
from envgen.pipeline.session import Session
from envgen.pipeline.smoke import run_planned
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.tiers import host_plan
from envgen.plan.image import ImagePlan, plan_image
from envgen.profile import Profile
from envgen.render import RenderedContext, render_in_memory
from envgen.smoke.report import SmokeReport
from envgen.vocabulary import (
    LABEL_COMPRESSION,
    LABEL_CONTENT_HASH,
)

if TYPE_CHECKING:
    from docker import DockerClient

SEALED_FREEZE = layout.SEALED_FREEZE


@dataclass
class BuildOutcome:
    profile: str
    tag: str
    image_id: str
    builder: str
    cached: bool = False
    validated: bool = False
    duration_s: float = 0.0
    steps: int = 0
    cached_steps: int = 0
    smoke: SmokeReport | None = None
    pushed: str | None = None
    log_path: Path | None = None
    notes: list[str] = field(default_factory=list)
    tier: str | None = None  # what the validation proves: libraries | gpu | cpu
    tier_reason: str | None = None  # why the GPU tier did not run here

    def summary(self) -> str:
        if self.cached:
            state = (f"validated: {self.tier or 'yes'}" if self.validated
                     else "not validated: `envgen run` refuses it until `envgen smoke`")
            head = f"{self.tag} is up to date ({self.image_id[:19]}, {state})"
        else:
            head = (f"built {self.tag} ({self.image_id[:19]}) in {self.duration_s:.1f}s with {self.builder}; "
                    f"{self.cached_steps}/{self.steps} steps from cache")
        lines = [head]
        if self.smoke is not None:
            lines.append(f"smoke test: {self.smoke.status} ({self.smoke.mode}, {self.smoke.duration_s:.1f}s)")
            if self.validated:
                lines.append(f"validated: {self.tier}" + (f"; the GPU tier did not run: {self.tier_reason}"
                                                          if self.tier_reason else ""))
        elif not self.cached:
            lines.append("smoke test: skipped (--no-smoke): the image is not validated; `envgen run` refuses it")
        if self.pushed:
            lines.append(f"pushed: {self.pushed} (validated: {self.tier or 'unknown'})")
        if self.log_path:
            lines.append(f"build log: {self.log_path}")
        return "\n".join(lines + self.notes)


def freeze(client: DockerClient, image_id: str) -> str:
    """The environment's complete, resolved package list (`pip freeze --all`): the lock as built. A freeze that
    fails is an error: the image is then neither sealed nor tagged (its label would vouch for the error text)."""
    command = ["python", "-m", "pip", "freeze", "--all", "--disable-pip-version-check"]
    result = run_container(client, image_id, command, gpus="none")
    if result.exit_code != 0:
        last = next((line for line in reversed(result.output.splitlines()) if line.strip()), "no output")
        raise BuildFailed(
            f"`{' '.join(command[:5])}` in image {image_id[:19]} failed (exit {result.exit_code}): {last.strip()}; "
            "the image was not sealed or tagged",
            fix=f"run `docker run --rm {image_id[:19]} {' '.join(command[:5])}` to see why",
        ).with_tail(result.output)
    lines = sorted(line for line in result.output.splitlines() if line and not line.startswith("WARNING"))
    return "\n".join(lines) + "\n"


def check_locked_base(client: DockerClient, profile: Profile, echo: Callable[[str], None]) -> None:
    """Before building: the base the lock pins must still be there (a local base: the same image ID; a
    registry base: its digest in the engine or the registry). Says so when the build is unlocked."""
    from envgen.lock.lock_base import check_local_base, check_registry_base
    from envgen.plan.installers import installer_of
    from envgen.plan.lockfile import lock_path, read_lock
    from envgen.profile.loader import profile_arg, profile_source

    source = profile_source(profile)
    if installer_of(profile).conda_env:
        if source is None or not lock_path(source, "conda").is_file():
            missing = lock_path(source, "conda").name if source else f"{profile.name}.conda.txt"
            echo(f"unlocked build: no {missing}; conda resolves the dependencies of the packages environment.yml "
                 f"pins today; run `envgen lock {profile_arg(profile)}` to pin them all")
        return
    path = lock_path(source) if source else None
    if path is None or not path.is_file():
        missing = path.name if path else f"{profile.name}.lock.txt"
        echo(f"unlocked build: no {missing}; run `envgen lock {profile_arg(profile)}` to pin the base, "
             "apt and pip packages")
        return
    lock = read_lock(path)
    image = parse_ref(profile.base).tagged
    if lock.base_image_id:
        changed = check_local_base(client, image, lock.base_image_id, path.name)
        if changed:
            echo(f"warning: {changed}")
    elif lock.base_digest:
        check_registry_base(client, f"{image}@{lock.base_digest}")


def build(
    ref: str,
    *,
    smoke: bool = True,
    push: bool = False,
    builder: str | None = None,
    wheelhouse: Path | None = None,
    offline: bool = False,
    registry: str | None = None,
    sink: ProgressSink | None = None,
    echo: Callable[[str], None] = lambda _line: None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    session: Session | None = None,
    compression: str = "gzip",
) -> BuildOutcome:
    """Check, render, build, smoke-test and record one profile's image. ``compression``: its layers' (gzip, or zstd
    where the builder can write it: ``docker.build.with_compression`` refuses it, before anything runs, elsewhere)."""
    if push and not smoke:
        raise InputError("--push with --no-smoke: only images that passed their smoke test are published",
                         fix="drop --no-smoke, or push later with `envgen push` after `envgen smoke`")
    session = Session.of(session, env)
    env, config = session.env, session.config
    known_compression(compression)
    if push:  # before anything is built: a push with nowhere to go fails now, not after the build
        from envgen.pipeline.publish import registry_to_use

        registry = registry_to_use(registry, config)
    kb = session.kb
    plan = plan_to_build(ref, kb, check, env, echo, offline)
    profile = plan.profile
    client = connect()
    engine = engine_info(client)
    info = with_compression(detect_builder(env, choice=builder or "auto",  # type: ignore[arg-type]
                                           engine=engine), compression)
    check_locked_base(client, profile, echo)
    check_base_labels(client, profile, kb)
    store = ValidationStore(config.state_dir)
    wheelhouse = wheelhouse_to_use(config, wheelhouse, env)
    if wheelhouse:
        echo(f"wheelhouse: {wheelhouse}")
    log_dir = config.state_dir / "logs"
    # One render of the plan the check judged. The tag is content-addressed and does not depend on the builder
    # or the wheelhouse: look for a validated image first, before writing to disk or downloading.
    planned = render_in_memory(plan, config)
    planned_tag = image_ref(config, profile.name, planned.content_hash)
    with build_lock(config.state_dir, profile.name, echo):
        return _build_locked(planned, kb, config, info, client, store, planned_tag,
                             smoke=smoke, push=push, wheelhouse=wheelhouse, offline=offline, registry=registry,
                             sink=sink, echo=echo, log_dir=log_dir, env=env)


def plan_to_build(ref: str, kb: KnowledgeBase, check: bool, env: Mapping[str, str] | None,
                  echo: Callable[[str], None], offline: bool = False) -> ImagePlan:
    """The profile's plan, checked (errors stop the build) or, with --no-check, checked only to say what it would
    have found; its warnings are echoed. ``offline``: the pip set's kept answer alone (no index asked)."""
    if check:
        plan, findings = checked_plan(ref, kb, offline=offline)
    else:
        from envgen.check import check_profile
        from envgen.profile import load_profile

        plan = plan_image(load_profile(ref, env, kb=kb), kb)
        findings = check_profile(plan.profile, kb, plan=plan)
        errors = [f for f in findings if f.severity == "error"]
        echo(f"warning: --no-check: building {plan.profile.name!r} without its compatibility check"
             + (f"; it has {len(errors)} error(s) that would have stopped the build" if errors else ""))
    for finding in findings:
        if finding.severity in ("warning", "error"):
            echo(f"warning: [{finding.code}] {finding.message}")
    return plan


def _build_locked(planned: RenderedContext, kb: KnowledgeBase, config: UserConfig, info: BuilderInfo,
                  client: DockerClient, store: ValidationStore, planned_tag: str, *,
                  smoke: bool, push: bool, wheelhouse: Path | None, offline: bool, registry: str | None,
                  sink: ProgressSink | None, echo: Callable[[str], None], log_dir: Path,
                  env: Mapping[str, str] | None) -> BuildOutcome:
    profile, content_hash, base_ref = planned.plan.profile, planned.content_hash, planned.plan.base.from_ref
    # Looked up under the lock: a build of the same content that just finished left its image here (with the layers'
    # compression asked for: LABEL_COMPRESSION; otherwise built again, the build cache making it an export).
    cached = _cached(profile, config, info, client, store, content_hash, planned_tag,
                     smoke=smoke, push=push, registry=registry, echo=echo)
    if cached is not None:
        return cached
    ensure_planned_fetchable(planned, config, wheelhouse, offline, echo)
    result, log_name = write_for_builder(planned, config, info, config.state_dir / "contexts" / profile.name,
                                         log_dir=log_dir, echo=echo, wheelhouse=wheelhouse, offline=offline)
    # A registry mirror for the base: the build arg BASE_IMAGE names it; pull it first so that a mirror
    # that does not answer or lacks the image is one clear line, not a builder error.
    mirrored = mirror_ref(base_ref, merge_mirrors(profile.mirrors, config.mirrors).registries)
    if mirrored is not None:
        fetch_base(client, mirrored, echo)
    elif not profile.local_base:  # a firewall: one line naming the registry, not the builder's resolver error
        ensure_base_reachable(client, base_ref)

    log_path = log_dir / f"{log_name}.log"
    built = build_image(
        result.dir, builder=info, log_path=log_path,
        dockerfile="Dockerfile" if info.uses_buildkit else "Dockerfile.classic",
        secrets={k: Path(v) for k, v in result.secrets.items()} if info.uses_buildkit else None,
        build_args=result.build_args, progress=sink, client=client, compression=info.compression,
        labels={LABEL_COMPRESSION: info.compression} if info.compression != "gzip" else None,
    )
    tag = image_ref(config, profile.name, result.content_hash)
    outcome = BuildOutcome(profile.name, tag, built.image_id, info.kind, duration_s=built.duration_s,
                           steps=built.steps, cached_steps=built.cached_steps, log_path=log_path)
    final_id = built.image_id
    if smoke:
        final_id = _smoke_and_seal(profile, kb, config, client, store, built.image_id, result.content_hash,
                                   outcome, echo, env, info)
    tag_all(client, final_id, [tag, alias_ref(config, profile.name)])
    outcome.image_id = final_id
    final = inspect_image(client, final_id)
    if final is not None:
        from envgen.pipeline.sizes import against_previous

        outcome.notes.append(against_previous(profile.name, final_id, final.size, env))
    if push:
        _push(client, config, tag, profile.name, registry, outcome)
    return outcome


def _push(client: DockerClient, config: UserConfig, tag: str, target: str, registry: str | None,
          outcome: BuildOutcome) -> None:
    """`build --push`: the image and its signed validation (``publish.publish_validated``)."""
    from envgen.pipeline.publish import publish_validated, registry_to_use

    image = inspect_image(client, tag)
    if image is not None:
        outcome.pushed = publish_validated(client, config.state_dir, image, tag, target,
                                           registry_to_use(registry, config))[0].split(" (", 1)[0]


def _cached(profile: Profile, config: UserConfig, info: BuilderInfo, client: DockerClient, store: ValidationStore,
            content_hash: str, planned_tag: str, *, smoke: bool, push: bool,
            registry: str | None, echo: Callable[[str], None] = lambda _line: None) -> BuildOutcome | None:
    """The image a build of the same content left (validated, or no smoke test asked for); None: build."""
    current = inspect_image(client, planned_tag)
    if not current or current.labels.get(LABEL_CONTENT_HASH) != content_hash \
            or current.labels.get(LABEL_COMPRESSION, "gzip") != info.compression:
        return None
    from envgen.pipeline.validity import image_verdict

    verdict = image_verdict(config.state_dir, current)  # a record alone (an older envgen's) is built again
    damaged = store.damaged(current.id) if store.get(current.id) is None else None
    if damaged and smoke:
        echo(f"note: {planned_tag} is built, but {damaged}; building and validating it again")
    if not (verdict.validated or not smoke):
        return None
    outcome = BuildOutcome(profile.name, planned_tag, current.id, info.kind, cached=True,
                           validated=verdict.validated, tier=verdict.tier or None)
    if push:
        _push(client, config, planned_tag, profile.name, registry, outcome)
    return outcome


def _smoke_and_seal(profile: Profile, kb: KnowledgeBase, config: UserConfig, client: DockerClient,
                    store: ValidationStore, image_id: str, content_hash: str, outcome: BuildOutcome,
                    echo: Callable[[str], None], env: Mapping[str, str] | None, info: BuilderInfo) -> str:
    """Smoke-test the built image, seal its report and package list into a child image (its layers compressed as
    ``info`` asks); the child's ID. A failed test raises SmokeFailed (nothing tagged)."""
    plan = host_plan(profile.gpu.required, env, kb=kb)
    if plan.reason:
        echo(f"smoke test: the library tier only: {plan.reason}")
    echo("smoke test: running the probe inside the image")
    report, plan = run_planned(client, image_id, plan, profile_name=profile.name,
                               content_hash=content_hash, store=store,
                               timeout_s=profile.smoke.timeout_s)
    outcome.smoke = report
    outcome.tier_reason = plan.reason
    if not report.passed:
        tiers = ("the library tier (the GPU tier did not run: " + plan.reason + ")" if plan.reason
                 else "the library and GPU tiers" if profile.gpu.required else "the CPU checks")
        raise SmokeFailed(
            f"image {image_id[:19]} of profile {profile.name!r} failed its smoke test ({tiers}); it "
            f"was not tagged", fix=f"read the diagnosis above; rerun with `envgen smoke {image_id[:19]}`",
        ).with_tail(report.table())
    outcome.tier = report.tier
    frozen = freeze(client, image_id)
    lock_path = config.state_dir / "locks" / f"{profile.name}-{content_hash[:12]}.txt"
    write_atomically(lock_path, frozen)
    outcome.notes.append(f"resolved packages ({len(frozen.splitlines())}): {lock_path} "
                         f"(in the image: {SEALED_FREEZE})")
    final_id = seal(client, image_id, report, frozen)
    if info.compression != "gzip" and outcome.log_path is not None:  # the commit wrote its layer with gzip
        final_id = recompressed(client, info, final_id, outcome.log_path.with_suffix(f".{info.compression}.log"))
    outcome.validated = True
    run_record = store.get(image_id)
    if run_record is not None:
        from dataclasses import replace

        from envgen.pipeline.validity import sign_pass

        sealed = replace(run_record, image_id=final_id)
        store.record(sealed)
        sign_pass(client, config.state_dir, sealed)  # the statement names the sealed image's digest
    return final_id
