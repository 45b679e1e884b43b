"""Parsing image references: ``[registry/]repo[:tag][@sha256:...]`` and the nvidia/cuda tag scheme."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envgen.imageref import parse_ref

CUDA_TAG_RE = re.compile(
    r"^(?P<cuda>\d+\.\d+(?:\.\d+)?)-(?:(?P<cudnn>cudnn\d*)-)?(?P<flavor>base|runtime|devel)-(?P<os>[a-z]+\d+(?:\.\d+)?)$"
)


@dataclass(frozen=True)
class ImageRef:
    repository: str  # "nvidia/cuda", "nvcr.io/nvidia/tensorflow", "ubuntu"
    tag: str  # "latest" when none is given
    digest: str | None


def parse_image(ref: str) -> ImageRef:
    """``envgen.imageref.parse_ref``'s reading, keyed as the KB keys images (Docker Hub's prefixes dropped, no tag
    read as "latest")."""
    name = parse_ref(ref)
    return ImageRef(name.repository, name.tag or "latest", name.digest)
