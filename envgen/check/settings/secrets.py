"""Logins written into a profile's mirror URLs (``https://user:token@host/simple``). A profile is committed and
shared, so its text must not hold one: the finding names the setting (the login shown as ``***``) and where the
URL belongs instead, the user's config. The build never gets a login as an argument either way
(``render.plan.mirror_logins``: a netrc secret)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.mirrors import has_credential, redact

_SOURCE = "RFC 3986 §3.2.1 (user information in a URI) and §7.5 (it is not for secrets)"


def _urls(ctx: CheckContext) -> list[tuple[str, str]]:
    """(setting, URL) for every URL-valued mirror the profile itself writes."""
    mirrors = ctx.profile.mirrors
    out = [(f"mirrors.{key}", value) for key in ("pip_index_url", "conda_channel_alias", "apt_mirror",
                                                  "micromamba_url", "pytorch_wheels", "http_proxy", "https_proxy")
           if isinstance(value := getattr(mirrors, key), str)]
    out += [(f"mirrors.pip_extra_index_urls[{i}]", url) for i, url in enumerate(mirrors.pip_extra_index_urls)]
    out += [(f"mirrors.conda_channels.{name}", url) for name, url in sorted(mirrors.conda_channels.items())]
    return out


def mirror_logins(ctx: CheckContext) -> list[Finding]:
    return [finding("warning", "mirror-login",
                    f"{setting} holds a login ({redact(url)}): a profile is committed and shared, and so would be "
                    "the login",
                    f"write {setting} without user:password@ here, and the URL with its login in your "
                    "~/.config/envgen/config.yaml (or the file $ENVGEN_CONFIG names), whose mirrors override the "
                    "profile's; envgen hands the login to the build as a secret, never an argument", _SOURCE)
            for setting, url in _urls(ctx) if has_credential(url)]


RULES = [mirror_logins]
