"""One member of a zip file (a wheel, local or behind an https URL) as an ``elf_dynamic.Source``: its bytes inflated
front to back from range reads of the compressed data, only as far as the furthest byte asked for.

The first ``keep`` inflated bytes stay in memory (an object's program headers and string table are near its start);
past them only the span asked for is kept. A span behind what was inflated and past ``keep`` inflates the member again
from its start. The compressed bytes are read in growing chunks (64 KiB, doubling to 8 MiB), so a small object costs
one or two range requests and a large one reads no further than its dynamic segment.
"""

from __future__ import annotations

import struct
import zlib
from typing import IO

from tools.kbrefresh.wheel_stream import Member

_FIRST, _MOST = 1 << 16, 1 << 23


class MemberSource:
    def __init__(self, handle: IO[bytes], member: Member, keep: int = 1 << 25) -> None:
        handle.seek(member.offset)
        header = handle.read(30)
        if header[:4] != b"PK\x03\x04":
            raise ValueError(f"{member.name}: no local file header at {member.offset}")
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        self.handle, self.member, self.keep = handle, member, keep
        self.start = member.offset + 30 + name_len + extra_len
        self.compressed_read = 0  # figures: compressed bytes fetched
        self._reset()

    def _reset(self) -> None:
        self._inflater = zlib.decompressobj(-15) if self.member.method == 8 else None
        self._consumed, self._chunk = 0, _FIRST
        self._kept = bytearray()
        self._pos = 0  # inflated bytes produced so far
        self._pending = b""  # inflated bytes past _pos not yet handed out

    def _more(self) -> bytes:
        """The next inflated bytes; b"" at the member's end."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        left = self.member.compressed - self._consumed
        if left <= 0:
            return self._inflater.flush() if self._inflater else b""
        self.handle.seek(self.start + self._consumed)
        raw = self.handle.read(min(self._chunk, left))
        if not raw:
            return b""
        self._consumed += len(raw)
        self.compressed_read += len(raw)
        self._chunk = min(self._chunk * 2, _MOST)
        return self._inflater.decompress(raw) if self._inflater else raw

    def _advance(self, upto: int, collect_from: int) -> bytes:
        """Inflate until ``upto``; return the bytes from ``collect_from`` (>= the current position) to it."""
        out = bytearray()
        while self._pos < upto:
            data = self._more()
            if not data:
                break
            if self._pos + len(data) > upto:  # the rest waits for the next span
                self._pending, data = data[upto - self._pos:], data[:upto - self._pos]
            end = self._pos + len(data)
            if self._pos < self.keep:
                self._kept += data[: self.keep - self._pos]
            lo = max(collect_from, self._pos)
            if lo < end:
                out += data[lo - self._pos:]
            self._pos = end
        return bytes(out)

    def span(self, start: int, length: int) -> bytes:
        end = start + length
        if end <= len(self._kept):
            return bytes(self._kept[start:end])
        if start < self._pos:  # behind what was inflated and not kept: from the member's start again
            self._reset()
        return self._advance(end, start)
