"""Where a resolution for the image's platform looks, and how: the wheelhouse, the framework's find-links pages and
index (each through its mirror), a mirror of PyPI, the build's routing args and the mirrors' logins as the host's
pip and uv see them, the wheel tags the base's glibc allows. What `envgen lock`, `check --resolve` and suggest's
resolutions share (``resolution_route``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from envgen.config import UserConfig
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.lock.platforms import wheel_tags
from envgen.lock.wheels import configured_wheelhouse
from envgen.mirrors import pytorch_route
from envgen.plan.image import ImagePlan, plan_image
from envgen.plan.lock_platforms import ARCH, main_platform
from envgen.plan.lockfile import wheelhouse_covers
from envgen.profile import Profile
from envgen.render.plan import TemplateInput, render_context
from envgen.vocabulary import ARGS_PIP_ROUTE

# Build args that route pip (mirrors, proxies): the host's resolution takes the same route.
ROUTE_ARGS = ARGS_PIP_ROUTE


@dataclass(frozen=True)
class Route:
    """Where a resolution for the image's platform looks, and how: what `envgen lock` and `check --resolve` use."""

    plan: TemplateInput
    glibc: str | None
    platforms: tuple[str, ...]
    find_links: list[str]  # the wheelhouse, then the framework's find-links pages
    index_urls: list[str]  # the framework's index, unless the wheelhouse covers its local-version wheels
    index_url: str | None  # a mirror of PyPI (PIP_INDEX_URL)
    uv_extra: list[str]  # uv's --extra-index-url: the mirrors' extra indexes, then index_urls
    pip_env: dict[str, str]  # the host's environment with the build's routing args (mirrors, proxies)
    uv_env: dict[str, str]  # the host's environment with the proxy CA for uv
    arch: str = "x86_64"  # the machine of the main sections' platform (aarch64 for an arm64-only profile)


def resolution_route(profile: Profile, kb: KnowledgeBase, config: UserConfig, environ: Mapping[str, str],
                     wheelhouse: Path | None = None, plan: ImagePlan | None = None) -> Route:
    """Where the profile's pip sets resolve (``plan``: the profile's plan, when the caller made it already)."""
    written = render_context(plan_image(profile, kb) if plan is None else plan, config, wheelhouse=wheelhouse,
                             use_lock=False)
    house = written.wheelhouse or configured_wheelhouse(environ)
    if house is not None and not house.is_dir():
        raise InputError(f"wheelhouse {house} is not a directory", fix="pass --wheelhouse DIR with wheels in it")
    torch_mirror = written.build_args.get("PYTORCH_WHEELS")  # mirrors.pytorch_wheels, as the build routes it
    index_urls = [] if wheelhouse_covers(house, written.pins.pip) else [pytorch_route(u, torch_mirror)
                                                                      for u in written.pip.index_urls]
    find_links = [pytorch_route(u, torch_mirror) for u in written.pip.find_links]
    pip_env = dict(environ)
    pip_env.update({key: value for key, value in written.build_args.items() if key in ROUTE_ARGS})
    pip_env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    uv_env = dict(environ)
    if config.ca_bundle and "SSL_CERT_FILE" not in uv_env:
        uv_env["SSL_CERT_FILE"] = str(config.ca_bundle)
    if written.netrc:  # the mirrors' logins: a netrc for pip and uv, never in an argument or the lock
        from envgen.render.core import write_netrc

        pip_env["NETRC"] = uv_env["NETRC"] = str(write_netrc(written.netrc, config.state_dir / "secrets",
                                                             f"lock-{profile.name}"))
    glibc, main = kb.glibc(profile.base), main_platform(profile.platforms)
    return Route(written, glibc, wheel_tags(glibc, main), ([str(house)] if house else []) + find_links,
                 index_urls, written.build_args.get("PIP_INDEX_URL"),
                 [*written.build_args.get("PIP_EXTRA_INDEX_URL", "").split(), *index_urls], pip_env, uv_env,
                 ARCH[main])
