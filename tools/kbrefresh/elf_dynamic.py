"""What a shared object asks of the dynamic loader, read from its ELF64 program headers and dynamic segment: its
``DT_NEEDED`` sonames, its own ``DT_SONAME`` and its ``DT_RUNPATH``/``DT_RPATH``.

The reader works on a member of a wheel that is inflated front to back (``wheel_libs``): the program headers sit
at the start, the dynamic segment after the code, and the string table it points at near the start again, so the
member's bytes are asked for by range (``Source.span``) and only what the loader itself reads is kept. A small stdlib
parser rather than pyelftools: pyelftools' ``ELFFile`` reads the section header table at the end of the file when it
opens one, which on a deflated member means inflating all of it (libtorch_cuda.so: ~1 GB); the loader never reads
section headers, and neither does this. Only little-endian ELF64 (x86-64, aarch64: the platforms envgen builds).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
_EHDR = 64
_PHDR = struct.Struct("<IIQQQQQQ")  # type, flags, offset, vaddr, paddr, filesz, memsz, align
_DYN = struct.Struct("<qQ")


class NotElf(ValueError):
    """The bytes are not a little-endian ELF64 shared object (or a part the loader needs is out of the file)."""


class Source(Protocol):
    def span(self, start: int, length: int) -> bytes:
        """``length`` bytes of the file from ``start`` (fewer only at the file's end)."""
        ...


@dataclass(frozen=True)
class Dynamic:
    needed: tuple[str, ...]
    soname: str | None
    runpath: str | None


def _segments(src: Source) -> list[tuple[int, int, int, int]]:
    head = src.span(0, _EHDR)
    if head[:4] != b"\x7fELF":
        raise NotElf("no ELF magic")
    if head[4] != 2 or head[5] != 1:
        raise NotElf(f"ELF class {head[4]} data {head[5]}: only little-endian ELF64 is read")
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    table = src.span(phoff, phentsize * phnum)
    out = []
    for i in range(phnum):
        p_type, _, offset, vaddr, _, filesz, _, _ = _PHDR.unpack_from(table, i * phentsize)
        out.append((p_type, offset, vaddr, filesz))
    return out


def _offset(loads: list[tuple[int, int, int, int]], address: int) -> int:
    """The file offset of a virtual address, through the PT_LOAD segment that maps it."""
    for _, offset, vaddr, filesz in loads:
        if vaddr <= address < vaddr + filesz:
            return address - vaddr + offset
    raise NotElf(f"address {address:#x} is in no loaded segment")


def _string(table: bytes, at: int) -> str:
    end = table.find(b"\0", at)
    return table[at:end if end >= 0 else len(table)].decode("utf-8", "replace")


def read_dynamic(src: Source) -> Dynamic | None:
    """The object's dynamic entries; None for an object without a dynamic segment (a static one)."""
    segments = _segments(src)
    dyn = next((s for s in segments if s[0] == PT_DYNAMIC), None)
    if dyn is None:
        return None
    raw = src.span(dyn[1], dyn[3])
    entries: list[tuple[int, int]] = []
    for i in range(len(raw) // _DYN.size):
        tag, value = _DYN.unpack_from(raw, i * _DYN.size)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    tags = dict(entries)
    if DT_STRTAB not in tags or DT_STRSZ not in tags:
        raise NotElf("the dynamic segment names no string table")
    loads = [s for s in segments if s[0] == PT_LOAD]
    strings = src.span(_offset(loads, tags[DT_STRTAB]), tags[DT_STRSZ])
    needed = tuple(_string(strings, v) for t, v in entries if t == DT_NEEDED)
    soname = _string(strings, tags[DT_SONAME]) if DT_SONAME in tags else None
    path = tags.get(DT_RUNPATH, tags.get(DT_RPATH))
    return Dynamic(needed, soname, _string(strings, path) if path is not None else None)


class BytesSource:
    """A whole file in memory as a ``Source`` (a small library, a test's object)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def span(self, start: int, length: int) -> bytes:
        return self.data[start:start + length]
