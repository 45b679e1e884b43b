"""Parsing image references: ``[registry/]repo[:tag][@sha256:...]`` and the nvidia/cuda tag scheme."""

from __future__ import annotations

import re
from dataclasses import dataclass

CUDA_TAG_RE = re.compile(
    r"^(?P<cuda>\d+\.\d+(?:\.\d+)?)-(?:(?P<cudnn>cudnn\d*)-)?(?P<flavor>base|runtime|devel)-(?P<os>[a-z]+\d+(?:\.\d+)?)$"
)


@dataclass(frozen=True)
class ImageRef:
    repository: str  # "nvidia/cuda", "nvcr.io/nvidia/tensorflow", "ubuntu"
    tag: str  # "latest" when none is given
    digest: str | None


def parse_image(ref: str) -> ImageRef:
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repository, tag = ref.rsplit(":", 1)
    else:
        repository, tag = ref, "latest"
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/"):
        if repository.startswith(prefix):
            repository = repository[len(prefix) :]
    if repository.startswith("library/"):
        repository = repository[len("library/") :]
    return ImageRef(repository, tag, digest)
