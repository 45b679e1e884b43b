"""Image references, parsed in one place: ``[registry/]path[:tag][@digest]``, as the engine reads them.

Pure string work. ``parse_ref("localhost:5000/envgen/x:abc@sha256:...")`` gives the name
(``localhost:5000/envgen/x``), the tag and the digest; ``registry_host`` says which first component is a registry.
"""

from __future__ import annotations

from dataclasses import dataclass

# the prefixes under which Docker Hub's images also go (its official ones under library/ too)
_HUB_PREFIXES = ("docker.io/library/", "docker.io/", "index.docker.io/")


@dataclass(frozen=True)
class ImageName:
    name: str  # everything before the tag: "localhost:5000/envgen/x", "nvidia/cuda", "docker.io/library/ubuntu"
    tag: str | None  # None when the reference names none (the engine then reads "latest")
    digest: str | None  # "sha256:..."

    @property
    def tagged(self) -> str:
        """The reference without its digest: ``name[:tag]``."""
        return f"{self.name}:{self.tag}" if self.tag is not None else self.name

    @property
    def repository(self) -> str:
        """The name as the knowledge base keys it: Docker Hub's prefixes dropped (``docker.io/library/ubuntu`` ->
        ``ubuntu``), any other registry kept (``nvcr.io/nvidia/tensorflow``)."""
        name = self.name
        for prefix in _HUB_PREFIXES:
            if name.startswith(prefix):
                name = name[len(prefix):]
        return name.removeprefix("library/")


def parse_ref(ref: str) -> ImageName:
    name, _, digest = ref.partition("@")
    slash, colon = name.rfind("/"), name.rfind(":")
    tag = None
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    return ImageName(name, tag, digest or None)


def registry_host(ref: str) -> str | None:
    """The registry host a reference names, as the engine reads it: the first component, when a path follows
    and it has a dot, a port or is ``localhost``; None for a Docker Hub name ("ubuntu", "nvidia/cuda")."""
    first, sep, _ = ref.partition("/")
    return first if sep and ("." in first or ":" in first or first == "localhost") else None
