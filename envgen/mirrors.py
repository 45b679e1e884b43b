"""Registry mirrors for image references (``mirrors.registries``), and the shell that points a base's apt
sources at ``mirrors.apt_mirror`` (``apt_mirror_shell``).

Pure string work, no Docker: ``docker.io: mirror.example.org`` routes ``ubuntu:22.04``,
``library/ubuntu:22.04`` and ``docker.io/library/ubuntu:22.04`` to
``mirror.example.org/library/ubuntu:22.04``; ``nvcr.io: mirror.example.org/nvcr`` routes
``nvcr.io/nvidia/tensorflow:23.12-tf2-py3`` to ``mirror.example.org/nvcr/nvidia/tensorflow:23.12-tf2-py3``.
Tags and digests are kept as they are, so a digest-pinned reference stays digest-pinned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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


# The archives mirrors.apt_mirror replaces, as a sed -E pattern and what replaces it ("$m" is the mirror): the
# primary archive of Debian and of Ubuntu (security.ubuntu.com serves the same /ubuntu tree, so an Ubuntu
# mirror carries the -security suites) and Debian's security archive, which mirrors keep beside /debian as
# /debian-security. A trailing slash or none, followed by a blank or the end of the line: one-line sources
# ("deb http://archive.ubuntu.com/ubuntu/ jammy main") and deb822 ("URIs: http://deb.debian.org/debian").
APT_ARCHIVES: tuple[tuple[str, str], ...] = (
    (r"https?://(archive|security)\.ubuntu\.com/ubuntu/?([[:space:]]|$)", r"${m}/\2"),
    (r"https?://deb\.debian\.org/debian/?([[:space:]]|$)", r"${m}/\1"),
    (r"https?://(deb|security)\.debian\.org/debian-security/?([[:space:]]|$)", r"${m}-security/\2"),
)


def _sed_expressions() -> str:
    out = []
    for pattern, replacement in APT_ARCHIVES:
        escaped = pattern.replace("$", "\\$")  # inside the shell's double quotes
        out.append(f'-e "s#{escaped}#{replacement}#g"')
    return " ".join(out)


def apt_mirror_shell(mirror: str, ca_files: tuple[str, ...], apt_dir: str = "/etc/apt") -> list[str]:
    """Shell lines (each ending in ``;``) that point the sources under ``apt_dir`` at ``mirror`` (a shell word:
    ``"${APT_MIRROR}"`` or a quoted URL). An ``https://`` mirror on a base with no CA certificates (none of
    ``ca_files`` present) is used over http:// (apt checks the archive's signatures, not the transport), and a
    mirror that matched no source is a warning, not silence."""
    no_ca = " && ".join(f"[ ! -s {f} ]" for f in ca_files) or "true"
    return [
        f'm={mirror}; m="${{m%/}}";',
        f'if [ "${{m#https://}}" != "$m" ] && {no_ca}; then m="http://${{m#https://}}";',
        '  echo "envgen: warning: no CA certificates in the base for the https:// apt mirror; using $m" >&2; fi;',
        f"find {apt_dir} \\( -name '*.list' -o -name '*.sources' \\) -exec sed -i -E {_sed_expressions()} {{}} +;",
        f'grep -rqsF "$m" {apt_dir}/sources.list {apt_dir}/sources.list.d || echo "envgen: warning:'
        " mirrors.apt_mirror ($m) matched no apt source (looked for deb.debian.org, archive.ubuntu.com and"
        f' security.ubuntu.com under {apt_dir}): apt uses the base image sources" >&2;',
    ]


__all__ = ["APT_ARCHIVES", "DOCKER_HUB", "PYTORCH_WHEELS", "MirroredRef", "apt_mirror_shell", "mirror_ref",
           "pytorch_route", "pytorch_shell", "split_registry"]
