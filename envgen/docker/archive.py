"""Images as files: ``docker save`` streams out, ``docker load`` in, and single files read from an
image without starting it. Nothing here knows about profiles or bundles."""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from envgen.errors import EnvgenError

if TYPE_CHECKING:
    from docker import DockerClient

_LOADED_ID = re.compile(r"Loaded image ID: (sha256:[0-9a-f]{64})")
_LOADED_REF = re.compile(r"Loaded image: (\S+)")


def save_stream(client: DockerClient, image: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
    """The ``docker save`` tar of ``image`` (an ID gives an archive with no tags in it)."""
    yield from client.api.get_image(image, chunk_size=chunk_size)


def load_archive(client: DockerClient, archive: IO[bytes]) -> list[str]:
    """``docker load`` from an open file; returns the image IDs or references the engine reports."""
    from docker.errors import APIError

    try:
        events = client.api.load_image(archive)
        loaded: list[str] = []
        for event in events:
            if "error" in event or "errorDetail" in event:
                detail = event.get("error") or (event.get("errorDetail") or {}).get("message", "")
                raise EnvgenError(f"the engine refused the image archive: {' '.join(str(detail).split())}")
            text = str(event.get("stream", ""))
            loaded += _LOADED_ID.findall(text) or _LOADED_REF.findall(text)
    except APIError as exc:
        raise EnvgenError(f"the engine refused the image archive: {' '.join(str(exc.explanation or exc).split())}") \
            from None
    return loaded


def read_file(client: DockerClient, image: str, path: str) -> bytes | None:
    """One file from ``image``, read through a created (never started) container; None if absent."""
    from docker.errors import APIError, NotFound

    container = client.containers.create(image)
    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            return member.read() if member else None
    except (NotFound, APIError, tarfile.TarError, IndexError):
        return None
    finally:
        container.remove(force=True)


__all__ = ["load_archive", "read_file", "save_stream"]
