"""`envgen build` for a profile with several platforms: check -> render once -> one buildx build for every platform,
pushed as one manifest list -> the probe's library tier in each platform's image (the foreign ones under QEMU) ->
a validation record per platform image.

What differs from a one-platform build: the images live in the registry (a multi-platform build cannot be loaded
into a classic image store), so the registry is required; the GPU tier runs only where the platform is the host's
and a GPU is lent (no arm64 GPU is lent to these machines: arm64 images are proved to the library tier alone); the
images are not sealed (sealing commits a layer per image, which would change the pushed index).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.config import load_config
from envgen.docker import BuilderInfo, ProgressSink, connect, detect_builder, run_container
from envgen.docker.engine import engine_info
from envgen.docker.multiplatform import (
    MultiPlatformResult,
    build_multiplatform,
    check_platforms,
    host_platform,
    require_emulation,
)
from envgen.errors import InputError
from envgen.pipeline.build import _log_name, _plan_to_build, _write_for_builder
from envgen.pipeline.publish import registry_to_use, remote_ref
from envgen.pipeline.session import Session
from envgen.pipeline.smoke import record_result, smoke_command
from envgen.pipeline.state import ValidationStore
from envgen.plan.installers import installer_of
from envgen.profile import Profile
from envgen.render import RenderResult, render_in_memory
from envgen.render.core import image_tag, reroute
from envgen.smoke.report import SmokeReport

if TYPE_CHECKING:
    from docker import DockerClient

LIBRARY_TIER_TIMEOUT_S = 1200.0  # the probe under QEMU: Python's start and imports run ~5-20x slower


@dataclass
class PlatformsOutcome:
    profile: str
    built: MultiPlatformResult
    reports: dict[str, SmokeReport] = field(default_factory=dict)  # platform -> its library tier's report
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"built {self.profile} for {len(self.built.images)} platforms in {self.built.duration_s:.0f}s: "
                 f"{self.built.ref}@{self.built.index_digest}"]
        for image in self.built.images:
            report = self.reports.get(image.platform)
            verdict = "not smoke-tested" if report is None else \
                f"library tier {'passed' if report.passed else 'FAILED'}"
            lines.append(f"  {image.platform}: {image.digest} ({verdict})")
        return "\n".join(lines + [f"  {note}" for note in self.notes])


def several_platforms(ref: str, env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The profile's platforms when its build is a multi-platform one (more than one, or not the host's alone);
    None for the one-platform build of the host's platform."""
    from envgen.profile import load_profile

    platforms = tuple(load_profile(ref, env).platforms)
    return None if platforms == (host_platform(),) else platforms


def refuse_split_lock(profile: Profile, platforms: Sequence[str]) -> None:
    """A pip lock whose set for another platform is not linux/amd64's (platform wheels: numpy, torch) cannot be built
    for several platforms yet: the rendered Dockerfile installs the lock's sections, linux/amd64's, on every platform,
    and the other platform's hashes would not match. One line naming the platform and the lock."""
    from envgen.plan.lock_platforms import AMD64, parse_blocks
    from envgen.plan.lockfile import lock_path, read_lock
    from envgen.profile.loader import profile_source

    source = profile_source(profile)
    path = lock_path(source) if source is not None and not installer_of(profile).conda_env else None
    if path is None or not path.is_file():
        return
    lock, blocks = read_lock(path), parse_blocks(path.read_text(encoding="utf-8"), str(path))
    amd64 = set(lock.environment) | set(lock.extras)
    for platform in (p for p in platforms if p != AMD64):
        block = blocks.get(platform)
        if block is None or set(block.environment) | set(block.extras) != amd64:
            what = "has no set" if block is None else "holds other wheels than linux/amd64's"
            raise InputError(f"the lock {path.name} {what} for {platform}; a multi-platform build installs one "
                             "lock on every platform (per-platform locked installs are not rendered yet)",
                             fix=f"build {platform} without the lock (move {path.name} aside), or build linux/amd64 "
                                 "alone")


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
    plan = _plan_to_build(ref, kb, check, env, echo)
    profile = plan.profile
    refuse_split_lock(profile, platforms)
    info = detect_builder(env, choice="buildkit", engine=engine_info(connect()))
    planned = render_in_memory(profile, kb, config, plan=plan)
    log_name = _log_name(profile, planned.content_hash)
    log_dir = config.state_dir / "logs"
    written = _write_for_builder(reroute(planned, config, None, False), kb, config, info,
                                 config.state_dir / "contexts" / f"{profile.name}-platforms", None, log_dir, echo,
                                 log_name)
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
        client = connect()
        store = ValidationStore(load_config(env).state_dir)
        for image in built.images:
            outcome.reports[image.platform] = library_tier(client, built.by_digest(image), image.platform,
                                                           store, prepared.profile, prepared.content_hash)
        outcome.notes.append(gpu_tier_note(wanted))
    return outcome


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
