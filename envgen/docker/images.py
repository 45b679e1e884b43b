"""Image bookkeeping through the SDK: list envgen's images (labels ``io.envgen.*``), inspect, tag, remove."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from envgen.errors import InputError
from envgen.imageref import parse_ref
from envgen.vocabulary import LABEL_PREFIX

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker.socket_engine import Engine



@dataclass(frozen=True)
class ImageSummary:
    id: str
    tags: tuple[str, ...]
    labels: dict[str, str]
    size: int  # bytes
    created: datetime  # UTC
    digests: tuple[str, ...] = ()  # "repo@sha256:..." from registries
    layers: tuple[str, ...] = ()  # RootFS layer digests (only from inspect_image)


def split_ref(ref: str) -> tuple[str, str]:
    """``"localhost:5000/envgen/x:abc"`` -> ``("localhost:5000/envgen/x", "abc")``; no tag -> "latest"."""
    parsed = parse_ref(ref)
    if parsed.digest:
        raise InputError(f"{ref!r}: expected a tag, not a digest reference")
    return parsed.name, parsed.tag or "latest"


def _created(value: Any) -> datetime:
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    text = str(value)
    if "." in text:  # "2024-05-01T10:00:00.123456789Z": trim nanoseconds for fromisoformat
        head, frac = text.split(".", 1)
        text = head + "." + frac.rstrip("Z")[:6] + "+00:00"
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _tags(values: Any) -> tuple[str, ...]:
    """The image's tags as Docker names them: Podman's compat API reports ``docker.io/ns/name:tag`` (and
    ``docker.io/library/name:tag``) for what Docker calls ``ns/name:tag``."""
    return tuple(_short(t) for t in (values or []) if t and t != "<none>:<none>")


def _repo_tags(values: Any) -> tuple[str, ...]:
    """``_tags`` of RepoTags, without ``name@sha256:…``: Docker 26's containerd store lists an image pulled by digest
    under that name there (a digest, not a tag)."""
    return tuple(tag for tag in _tags(values) if "@" not in tag)


def _short(ref: str) -> str:
    for prefix in ("docker.io/library/", "docker.io/"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def list_images(client: DockerClient, label_prefix: str = LABEL_PREFIX) -> list[ImageSummary]:
    """Images carrying at least one label that starts with ``label_prefix``, newest first."""
    found = []
    for row in client.api.images():
        labels = row.get("Labels") or {}
        if not any(key.startswith(label_prefix) for key in labels):
            continue
        found.append(ImageSummary(row["Id"], _repo_tags(row.get("RepoTags")), dict(labels),
                                  int(row.get("Size", 0)), _created(row.get("Created", 0)),
                                  _tags(row.get("RepoDigests"))))
    return sorted(found, key=lambda image: image.created, reverse=True)


def image_attrs(client: Engine, ref: str) -> dict[str, Any] | None:
    """The engine's inspect answer for ``ref`` (name or ID); None when there is no such image, including when
    ``ref`` is not a valid reference at all (the engine answers 400: no image can have it)."""
    from envgen.docker.socket_engine import SocketEngine

    if isinstance(client, SocketEngine):
        return client.inspect_image(ref)
    from docker.errors import APIError, ImageNotFound

    try:
        return dict(client.api.inspect_image(ref))
    except ImageNotFound:
        return None
    except APIError as exc:
        if exc.status_code == 400:
            return None
        raise


def inspect_image(client: Engine, ref: str) -> ImageSummary | None:
    """Labels, size, created, digests and layers of ``ref`` (name or ID); None when there is no such image
    (``image_attrs``)."""
    data = image_attrs(client, ref)
    if data is None:
        return None
    config = data.get("Config") or {}
    return ImageSummary(data["Id"], _repo_tags(data.get("RepoTags")), dict(config.get("Labels") or {}),
                        int(data.get("Size", 0)), _created(data.get("Created", 0)),
                        _tags(data.get("RepoDigests")), tuple((data.get("RootFS") or {}).get("Layers") or ()))


def tag_image(client: DockerClient, image: str, ref: str) -> None:
    repo, tag = split_ref(ref)
    client.api.tag(image, repo, tag, force=True)


def untag(client: DockerClient, ref: str) -> None:
    """Remove one tag, keeping the image if other tags or containers use it; no error if absent."""
    from docker.errors import ImageNotFound

    with contextlib.suppress(ImageNotFound):
        client.api.remove_image(ref, noprune=True)


def tag_all(client: DockerClient, image_id: str, refs: Sequence[str]) -> None:
    """Tag ``image_id`` with every ref, or with none: an interruption half-way removes the tags made."""
    done: list[str] = []
    try:
        for ref in refs:
            tag_image(client, image_id, ref)
            done.append(ref)
    except BaseException:
        for ref in done:
            with contextlib.suppress(Exception):  # best effort; the original error matters
                untag(client, ref)
        raise


def remove_image(client: DockerClient, ref: str, *, force: bool = False) -> bool:
    """Remove an image (by tag: that tag; by ID: the image). False when it did not exist."""
    from docker.errors import NotFound

    try:
        client.api.remove_image(ref, force=force)
    except NotFound:  # ImageNotFound from Docker; Podman's 404 has other words
        return False
    return True
