"""Registry mirrors for image references (``mirrors.registries``) and for download.pytorch.org
(``mirrors.pytorch_wheels``). The shell that points a base's apt sources at ``mirrors.apt_mirror`` is a build
script: templates/sh/apt-mirror.sh.

Pure string work, no Docker: ``docker.io: mirror.example.org`` routes ``ubuntu:22.04``,
``library/ubuntu:22.04`` and ``docker.io/library/ubuntu:22.04`` to
``mirror.example.org/library/ubuntu:22.04``; ``nvcr.io: mirror.example.org/nvcr`` routes
``nvcr.io/nvidia/tensorflow:23.12-tf2-py3`` to ``mirror.example.org/nvcr/nvidia/tensorflow:23.12-tf2-py3``.
Tags and digests are kept as they are, so a digest-pinned reference stays digest-pinned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from envgen.imageref import registry_host

DOCKER_HUB = "docker.io"
# Other names Docker Hub goes by in references and engine configuration.
_HUB_ALIASES = ("index.docker.io", "registry-1.docker.io", "registry.hub.docker.com")


@dataclass(frozen=True)
class MirroredRef:
    original: str
    registry: str  # the registry the original points at ("docker.io" for unqualified names)
    mirror: str  # the mirror configured for it
    ref: str  # the reference through the mirror


def split_registry(ref: str) -> tuple[str, str]:
    """``(registry, path[:tag][@digest])``: the registry host (``registry_host``), or Docker Hub with
    ``library/`` added to one-component names as the engine does."""
    host = registry_host(ref)
    if host is not None:
        registry, path = host, ref.partition("/")[2]
    else:
        registry, path = DOCKER_HUB, ref
    if registry in _HUB_ALIASES:
        registry = DOCKER_HUB
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    return registry, path


def mirror_ref(ref: str, registries: Mapping[str, str]) -> MirroredRef | None:
    """``ref`` through the mirror configured for its registry; None when none is."""
    if not registries:
        return None
    registry, path = split_registry(ref)
    mirror = registries.get(registry)
    if mirror is None and registry == DOCKER_HUB:
        mirror = next((registries[a] for a in _HUB_ALIASES if a in registries), None)
    if mirror is None:
        return None
    return MirroredRef(ref, registry, mirror, f"{mirror.rstrip('/')}/{path}")


# torch's wheel indexes and find-links pages live under this root; mirrors.pytorch_wheels replaces it.
PYTORCH_WHEELS = "https://download.pytorch.org/whl"


def pytorch_route(url: str, mirror: str | None) -> str:
    """``url`` through ``mirrors.pytorch_wheels``: download.pytorch.org/whl/cu121 -> MIRROR/cu121."""
    if mirror and url.startswith(PYTORCH_WHEELS):
        return mirror.rstrip("/") + url[len(PYTORCH_WHEELS):]
    return url


def pytorch_shell(url: str) -> str:
    """``url`` as a shell word part that the build arg PYTORCH_WHEELS reroutes (unset: the URL itself)."""
    if url.startswith(PYTORCH_WHEELS):
        return "${PYTORCH_WHEELS:-" + PYTORCH_WHEELS + "}" + url[len(PYTORCH_WHEELS):]
    return url


# ``scheme://user:password@`` (or ``scheme://token@``) in a URL: a credential. Shown as ``scheme://***@``.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")


@dataclass(frozen=True)
class Credential:
    """A login written into a mirror URL: the machine (host, no port: what netrc names), login and password."""
    host: str
    login: str
    password: str


def split_credential(url: str) -> tuple[str, Credential | None]:
    """``url`` without its ``user:password@``, and that credential (None when the URL has none)."""
    parts = urlsplit(url)
    if parts.username is None or parts.hostname is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, Credential(parts.hostname, unquote(parts.username), unquote(parts.password or ""))


def has_credential(url: str) -> bool:
    return split_credential(url)[1] is not None


def redact(text: str) -> str:
    """``text`` with every URL's ``user:password@`` shown as ``***@``: what envgen prints and logs of a URL."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)


def netrc_text(credentials: Iterable[Credential]) -> str:
    """A netrc file (pip, uv and curl read it: NETRC / --netrc-file) for ``credentials``, one machine a line; a
    second login for the same host is refused by the caller (netrc has one per machine)."""
    def quoted(word: str) -> str:  # quoted only where it must be (Python's netrc reads quotes, not every tool does)
        if word and not re.search(r'[\s"\\]', word):
            return word
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'

    return "".join(f"machine {c.host} login {quoted(c.login)} password {quoted(c.password)}\n"
                   for c in sorted(set(credentials), key=lambda c: c.host))


__all__ = ["DOCKER_HUB", "PYTORCH_WHEELS", "Credential", "MirroredRef", "has_credential", "mirror_ref",
           "netrc_text", "pytorch_route", "pytorch_shell", "redact", "split_credential", "split_registry"]
