"""Read a wheel (a local file or an https URL) once, front to back, hashing every byte and handing the
decompressed bytes of chosen members to a callback; nothing is written to disk.

The zip central directory (the last bytes of the file; one HTTP range request for a URL) names each member's
offset, method and compressed size; the body is then streamed in one pass, so the sha256 printed is that of
the whole file and the members of interest are inflated chunk by chunk and discarded.
"""

from __future__ import annotations

import hashlib
import struct
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 20
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"


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


def _tail(source: str, size: int, length: int) -> bytes:
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"Range": f"bytes={max(0, size - length)}-{size - 1}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return bytes(response.read())
    with open(source, "rb") as handle:
        handle.seek(max(0, size - length))
        return handle.read()


def _size(source: str) -> int:
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, method="HEAD")
        with urllib.request.urlopen(request, timeout=120) as response:
            return int(response.headers["Content-Length"])
    return Path(source).stat().st_size


def central_directory(source: str) -> tuple[int, list[Member]]:
    """The file's size and its members, from the end-of-central-directory record (zip64 included)."""
    size = _size(source)
    tail = _tail(source, size, min(size, 1 << 16))
    at = tail.rfind(_EOCD)
    if at < 0:
        raise ValueError(f"{source}: no zip end-of-central-directory record")
    count, cd_size, cd_offset = struct.unpack_from("<HII", tail, at + 10)
    locator = tail.rfind(_EOCD64_LOCATOR, 0, at)
    if locator >= 0:
        (eocd64,) = struct.unpack_from("<Q", tail, locator + 8)
        record = _tail(source, size, size - eocd64)[:56]
        count, cd_size, cd_offset = struct.unpack_from("<QQQ", record, 32)
    directory = _tail(source, size, size - cd_offset)[:cd_size]
    return size, list(_members(directory, count))


def _members(directory: bytes, count: int) -> Iterator[Member]:
    at = 0
    for _ in range(count):
        if directory[at : at + 4] != _CENTRAL:
            raise ValueError("corrupt zip central directory")
        method, = struct.unpack_from("<H", directory, at + 10)
        compressed, _, name_len, extra_len, comment_len = struct.unpack_from("<IIHHH", directory, at + 20)
        (offset,) = struct.unpack_from("<I", directory, at + 42)
        name = directory[at + 46 : at + 46 + name_len].decode("utf-8")
        extra = directory[at + 46 + name_len : at + 46 + name_len + extra_len]
        compressed, offset = _zip64(extra, compressed, offset)
        yield Member(name, offset, method, compressed)
        at += 46 + name_len + extra_len + comment_len


def _zip64(extra: bytes, compressed: int, offset: int) -> tuple[int, int]:
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, at)
        if tag == 1:
            values = list(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            # order: uncompressed, compressed, offset; present only where the 32-bit field is 0xFFFFFFFF
            _uncompressed = values.pop(0) if values else 0
            if compressed == 0xFFFFFFFF and values:
                compressed = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
        at += 4 + length
    return compressed, offset


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
