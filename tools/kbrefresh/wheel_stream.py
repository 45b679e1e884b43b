"""Read a wheel (a local file or an https URL) once, front to back, hashing every byte and handing the
decompressed bytes of chosen members to a callback; nothing is written to disk.

The zip central directory (the last bytes of the file, read by ``zipfile``; range requests for a URL) names each
member's offset, method and compressed size; the body is then streamed in one pass, so the sha256 printed is that of
the whole file and the members of interest are inflated chunk by chunk and discarded.
"""

from __future__ import annotations

import hashlib
import io
import struct
import time
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    name: str
    offset: int  # of its local header
    method: int  # 0 stored, 8 deflate
    compressed: int


@dataclass(frozen=True)
class StreamResult:
    sha256: str
    size: int
    read_bytes: int
    inflated_bytes: int
    seconds: float
    members: list[str]


def _range(url: str, start: int, end: int) -> bytes:
    """Bytes ``start``..``end`` (inclusive) of ``url`` by one HTTP range request."""
    request = urllib.request.Request(url, headers={"User-Agent": "envgen-kb-refresh", "Range": f"bytes={start}-{end}"})
    for attempt in range(3):  # a name lookup or a connection that fails once is tried again
        try:
            with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (https URLs of PyPI only)
                return bytes(response.read())
        except OSError:
            if attempt == 2:
                raise
            time.sleep(2 * (attempt + 1))
    raise AssertionError("unreachable")


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file through HTTP range requests (enough for ``zipfile``)."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        data = _range(self.url, self.pos, end - 1)[: end - self.pos]
        self.pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def open_seekable(source: str, size: int) -> IO[bytes]:
    """``source`` (a path or an https URL) as a seekable binary file: a URL reads by range requests."""
    if source.startswith(("http://", "https://")):
        return io.BufferedReader(RangeFile(source, size), buffer_size=1 << 16)
    return open(source, "rb")  # noqa: SIM115 - the caller closes it


def _size(source: str) -> int:
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, method="HEAD")
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (https URLs of PyPI only)
            return int(response.headers["Content-Length"])
    return Path(source).stat().st_size


def central_directory(source: str) -> tuple[int, list[Member]]:
    """The file's size and its members, read by ``zipfile`` from the central directory at the file's end (for a
    URL: a few range requests, not the whole file)."""
    size = _size(source)
    with open_seekable(source, size) as handle, zipfile.ZipFile(handle) as archive:
        return size, [Member(info.filename, info.header_offset, info.compress_type, info.compress_size)
                      for info in archive.infolist()]


class _Body:
    """Sequential reader over the whole file that hashes what passes through it."""

    def __init__(self, source: str) -> None:
        if source.startswith(("http://", "https://")):
            self._handle = urllib.request.urlopen(source, timeout=300)
        else:
            self._handle = open(source, "rb")  # noqa: SIM115 - closed in close()
        self.hash = hashlib.sha256()
        self.position = 0

    def read(self, n: int) -> bytes:
        data = self._handle.read(n)
        self.hash.update(data)
        self.position += len(data)
        return bytes(data)

    def skip_to(self, offset: int) -> None:
        while self.position < offset:
            if not self.read(min(_CHUNK, offset - self.position)):
                raise ValueError("file ended early")

    def close(self) -> None:
        while self.read(_CHUNK):
            pass
        self._handle.close()


def stream(source: str, wanted: Callable[[str], bool], sink: Callable[[str, bytes], None]) -> StreamResult:
    """Pass the inflated bytes of every member ``wanted`` selects to ``sink(name, chunk)``; hash the file."""
    started = time.monotonic()
    size, members = central_directory(source)
    chosen = sorted((m for m in members if wanted(m.name)), key=lambda m: m.offset)
    body, inflated = _Body(source), 0
    try:
        for member in chosen:
            body.skip_to(member.offset)
            header = body.read(30)
            name_len, extra_len = struct.unpack_from("<HH", header, 26)
            body.read(name_len + extra_len)
            inflater = zlib.decompressobj(-15) if member.method == 8 else None
            left = member.compressed
            while left:
                raw = body.read(min(_CHUNK, left))
                left -= len(raw)
                data = inflater.decompress(raw) if inflater else raw
                inflated += len(data)
                sink(member.name, data)
    finally:
        body.close()
    return StreamResult(body.hash.hexdigest(), size, body.position, inflated, time.monotonic() - started,
                        [m.name for m in chosen])
