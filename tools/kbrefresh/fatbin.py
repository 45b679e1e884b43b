"""Find the CUDA fat binaries in a byte stream (a shared object, fed in chunks) and list their entries.

A fat binary (what nvcc puts in an ELF ``.nv_fatbin`` section, one per translation unit) starts with the
header ``magic 0xBA55ED50, u16 version 1, u16 header size 16, u64 payload size``; its payload is a run of
entries, each ``u16 kind (1 = PTX, 2 = ELF/SASS), u16 version, u32 header size, u64 payload size, ...,
u32 arch at offset 28, u64 flags at offset 40`` followed by its (possibly compressed) payload. Only the headers
are read: the payloads are skipped, so a stream of any size is scanned in constant memory.

Flag 0x100000 marks an arch-specific code object (``sm_90a``, ``sm_100a``: it runs on exactly that compute
capability); ``FatbinScanner(variants=True)`` names those with the ``a`` suffix. Found on recorded wheels and checked
against NVIDIA's cuobjdump 13.5 (PyPI ``nvidia-cuda-cuobjdump``): sgl_kernel's ``flashmla_ops.abi3.so`` entries with
the flag are listed by ``cuobjdump --list-elf`` as ``sm_90a``/``sm_103a``, entries without it (flags 0x11) as
``sm_90``; an entry with 0x200000 instead (vLLM's FlashMLA for compute capability 10.0) is listed as plain ``sm_100``.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field

MAGIC = struct.pack("<I", 0xBA55ED50)
_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, payload size
_ENTRY = struct.Struct("<HHIQ")  # kind, version, header size, payload size
_ARCH_AT = 28
_FLAGS_AT = 40
_ARCH_SPECIFIC = 0x100000
_ENTRY_MIN = 48  # bytes of an entry header that are read
_KINDS = {1: "compute", 2: "sm"}


@dataclass
class FatbinScanner:
    """Feed bytes with :meth:`feed`; ``fatbins`` holds one frozenset of ``sm_XX``/``compute_XX`` per fat binary."""

    fatbins: list[frozenset[str]] = field(default_factory=list)
    variants: bool = False  # name arch-specific code objects sm_90a / compute_90a
    _buf: bytes = b""
    _base: int = 0  # absolute offset of _buf[0]
    _scan_from: int = 0  # absolute offset where the search for the next magic resumes
    _entry: int | None = None  # absolute offset of the next entry header inside the current fat binary
    _end: int = 0  # absolute offset where the current fat binary ends
    _current: set[str] = field(default_factory=set)

    def feed(self, data: bytes) -> None:
        buf = self._buf + data
        keep = 0
        while True:
            if self._entry is not None:
                rel = self._entry - self._base
                if rel + _ENTRY_MIN > len(buf):
                    keep = max(0, min(rel, len(buf)))
                    break
                self._read_entry(buf, rel)
                continue
            rel = max(0, self._scan_from - self._base)
            if rel >= len(buf):
                keep = len(buf)
                break
            hit = buf.find(MAGIC, rel)
            if hit < 0:
                keep = max(rel, len(buf) - len(MAGIC) + 1)
                break
            if hit + _HEADER.size > len(buf):
                keep = hit
                break
            self._open(buf, hit)
        self._buf = buf[keep:]
        self._base += keep

    def _open(self, buf: bytes, at: int) -> None:
        _, version, header, size = _HEADER.unpack_from(buf, at)
        start = self._base + at
        if version == 1 and header == _HEADER.size and 0 < size < 1 << 34:
            self._entry, self._end, self._current = start + header, start + header + size, set()
        self._scan_from = start + (header if self._entry is not None else 1)

    def _read_entry(self, buf: bytes, rel: int) -> None:
        kind, _, header, size = _ENTRY.unpack_from(buf, rel)
        (arch,) = struct.unpack_from("<I", buf, rel + _ARCH_AT)
        (flags,) = struct.unpack_from("<Q", buf, rel + _FLAGS_AT)
        assert self._entry is not None
        valid = kind in _KINDS and _ENTRY_MIN <= header <= 4096 and 10 <= arch <= 999
        if valid:
            suffix = "a" if self.variants and flags & _ARCH_SPECIFIC else ""
            self._current.add(f"{_KINDS[kind]}_{arch}{suffix}")
            self._entry += header + size
        if not valid or self._entry >= self._end:
            if valid and self._current:
                self.fatbins.append(frozenset(self._current))
            self._scan_from = self._end if valid else self._entry + 1
            self._entry = None


@dataclass(frozen=True)
class ArchSummary:
    """What a set of fat binaries holds: every code object, how many fat binaries carry each, and how many
    carry each exact set of codes."""

    fatbins: int
    counts: dict[str, int]
    sets: dict[frozenset[str], int]

    @classmethod
    def of(cls, fatbins: list[frozenset[str]]) -> ArchSummary:
        return cls(len(fatbins), dict(Counter(code for fb in fatbins for code in fb)), dict(Counter(fatbins)))

    def codes(self, prefix: str, share: float = 0.0) -> list[str]:
        """``sm_XX`` (or ``compute_XX``) codes carried by more than ``share`` of the fat binaries, by arch."""
        picked = [c for c, n in self.counts.items() if c.startswith(prefix + "_") and n > share * self.fatbins]
        return _by_arch(picked)

    def build_set(self) -> frozenset[str]:
        """The code set the build compiles its kernels for (TORCH_CUDA_ARCH_LIST, TF_CUDA_COMPUTE_CAPABILITIES):
        the most common exact set among fat binaries carrying more than one code. Kernels compiled for one
        architecture only (CUTLASS, flash attention) or for a subset (MAGMA) carry smaller sets and do not
        decide it; ties go to the larger set."""
        multi = {fb: n for fb, n in self.sets.items() if len(fb) > 1}
        if not multi:
            return frozenset(self.codes("sm", 0.5) + self.codes("compute", 0.5))
        return max(multi, key=lambda fb: (multi[fb], len(fb)))


def _by_arch(codes: list[str] | frozenset[str]) -> list[str]:
    return sorted(codes, key=lambda c: (int(c.split("_")[1].rstrip("af")), c))


def split_codes(codes: frozenset[str]) -> tuple[list[str], list[str]]:
    """(sm_XX cubins, compute_XX PTX), each by arch."""
    sass = [c for c in codes if c.startswith("sm_")]
    return _by_arch(sass), _by_arch([c for c in codes if c.startswith("compute_")])
