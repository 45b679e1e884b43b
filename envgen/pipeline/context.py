"""The build context of a checked plan, written for one builder: its packages routed through a wheelhouse or
offline, each download it needs reachable first, the classic builder's wheels fetched on the host, and the name of
its build log. Every build route prepares here (one image, ``pipeline.build``; several platforms,
``pipeline.platforms``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from envgen import layout
from envgen.config import UserConfig, merge_mirrors
from envgen.docker import BuilderInfo
from envgen.lock.wheels import configured_wheelhouse, manylinux_platforms, prefetch
from envgen.profile import Profile
from envgen.render import RenderedContext, RenderResult
from envgen.render.core import reroute, write_context


def write_for_builder(planned: RenderedContext, config: UserConfig, builder: BuilderInfo, context_dir: Path, *,
                      log_dir: Path, echo: Callable[[str], None], wheelhouse: Path | None = None,
                      offline: bool = False) -> tuple[RenderResult, str]:
    """The prepare step of every build route (one image, ``build``; several platforms, ``pipeline.platforms``): the
    context rendered once, its packages routed through ``wheelhouse`` or ``offline``, written to ``context_dir`` for
    ``builder``; with the name of its build log (under ``log_dir``)."""
    name = _log_name(planned.plan.profile, planned.content_hash)
    context = reroute(planned, config, wheelhouse, offline)
    return _write(context, config, builder, context_dir, wheelhouse, log_dir / name, echo, offline), name


def _write(context: RenderedContext, config: UserConfig, builder: BuilderInfo, context_dir: Path,
           wheelhouse: Path | None, log: Path, echo: Callable[[str], None], offline: bool) -> RenderResult:
    """Write the context; the classic builder's pip path gets its wheels first (their log: ``log``-wheels.log)."""
    profile = context.plan.profile
    from envgen.plan.installers import installer_of

    if builder.uses_buildkit or not installer_of(profile).pip_lock:
        if not builder.uses_buildkit:
            echo("note: the classic builder has no build secrets; conda downloads inside the build will not "
                 "see a proxy CA bundle")
        return write_context(context, context_dir, config.state_dir / "secrets")
    # Classic builder: the host downloads every wheel (it trusts the proxy; the mirrors' logins reach its pip as a
    # netrc), the build installs offline and gets no login.
    first = write_context(context, context_dir, config.state_dir / "secrets")
    house = config.state_dir / "wheelhouse" / f"{profile.name}-{first.content_hash[:12]}"
    find_links = [str(wheelhouse)] if wheelhouse else []
    echo(f"classic builder: downloading wheels on the host into {house}")
    prefetch([first.dir / "requirements.lock", first.dir / "requirements.extra.txt"], house,
             profile.python_minor, find_links=[*find_links, *context.plan.pip.find_links],
             index_urls=list(context.plan.pip.index_urls),
             platforms=manylinux_platforms(context.plan.image.base_part.glibc),
             log_path=log.with_name(f"{log.name}-wheels.log"), offline=offline,
             constraints=first.dir / layout.BASE_CONSTRAINTS if context.plan.pins.base else None,
             env=_host_pip_env(first))
    return write_context(reroute(context, config, house, offline=True), context_dir)


def _host_pip_env(first: RenderResult) -> dict[str, str]:
    """The mirrors' pip route for the host's download: their indexes (no login in them) and NETRC, the logins."""
    env = {k: v for k, v in first.build_args.items() if k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                                                                   "PIP_TRUSTED_HOST")}
    if layout.SECRET_NETRC in first.secrets:
        env["NETRC"] = first.secrets[layout.SECRET_NETRC]
    return env


def wheelhouse_to_use(config: UserConfig, given: Path | None, env: Mapping[str, str] | None) -> Path | None:
    """--wheelhouse, else the config's mirrors.wheelhouse, else a local directory PIP_FIND_LINKS names."""
    if given is None and config.mirrors.wheelhouse:
        given = Path(config.mirrors.wheelhouse).expanduser()
    return given if given is not None else configured_wheelhouse(env)


def ensure_planned_fetchable(planned: RenderedContext, config: UserConfig, wheelhouse: Path | None, offline: bool,
                      echo: Callable[[str], None]) -> None:
    """Before anything is downloaded: each index and download the build needs is reachable from here (or served by
    the wheelhouse), else one line naming it (``pipeline.fetch``)."""
    from envgen.pipeline.fetch import ensure_fetchable, probe_for
    from envgen.render.downloads import downloads

    mirrors = merge_mirrors(planned.plan.profile.mirrors, config.mirrors)
    from envgen.profile.loader import profile_arg

    ensure_fetchable(downloads(planned.plan.image, mirrors, wheelhouse), config.state_dir, wheelhouse=wheelhouse,
                     offline=offline, echo=echo, probe=probe_for(mirrors.http_proxy, mirrors.https_proxy),
                     profile_arg=profile_arg(planned.plan.profile))


def _log_name(profile: Profile, content_hash: str) -> str:
    """Each build its own log: profile, content, start time (UTC) and process."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{profile.name}-{content_hash[:12]}-{stamp}-{os.getpid()}"
