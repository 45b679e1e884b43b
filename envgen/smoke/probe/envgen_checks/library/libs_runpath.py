"""Library tier of the envgen probe: where a framework's own dlopen finds a library it loads lazily. PyPI's torch
(2.8: libcusolver.so.11) opens some CUDA libraries only at their first use, by soname, from libtorch_cuda.so, whose
DT_RUNPATH ($ORIGIN/../../nvidia/cusolver/lib ...) is searched for that dlopen (dlopen(3)); a bare ctypes load from
the probe has no such path. This reads the RUNPATH (or RPATH) of the framework's shared objects, as ld.so does.

Standard library only; Python 3.7+. ELF64 little-endian (x86-64, aarch64).
"""

import glob
import os
import struct
import sys

_DT_RPATH, _DT_RUNPATH, _DT_STRTAB, _SHT_DYNAMIC = 15, 29, 5, 6


def runpath(path):
    """The directories of ``path``'s DT_RUNPATH (else DT_RPATH), $ORIGIN expanded; [] when it has none or is no
    ELF64 little-endian file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return []
            shoff, = struct.unpack_from("<Q", head, 0x28)
            shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
            handle.seek(shoff)
            sections = [struct.unpack_from("<IIQQQQIIQQ", handle.read(shentsize)) for _ in range(shnum)]
            dynamic = next((s for s in sections if s[1] == _SHT_DYNAMIC), None)
            if dynamic is None:
                return []
            strtab = sections[dynamic[6]]  # sh_link: the dynamic string table
            handle.seek(dynamic[4])
            raw = handle.read(dynamic[5])
            entries = [struct.unpack_from("<qQ", raw, i) for i in range(0, len(raw) - 15, 16)]
            tags = dict((tag, value) for tag, value in entries if tag in (_DT_RPATH, _DT_RUNPATH))
            offset = tags.get(_DT_RUNPATH, tags.get(_DT_RPATH))
            if offset is None:
                return []
            handle.seek(strtab[4] + offset)
            text = handle.read(4096).split(b"\0", 1)[0].decode("utf-8", "replace")
    except (OSError, struct.error, IndexError):
        return []
    origin = os.path.dirname(os.path.abspath(path))
    return [os.path.normpath(d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
            for d in text.split(":") if d]


def through_runpath(soname, frameworks):
    """(file, shared object whose RUNPATH names its directory) for ``soname``, searched in the shared objects of
    the imported ``frameworks`` (import names, e.g. ["torch"]); None when none of them would find it."""
    for name in frameworks:
        module = sys.modules.get(name)
        root = os.path.dirname(getattr(module, "__file__", None) or "")
        if not root:
            continue
        for obj in sorted(glob.glob(os.path.join(root, "lib", "*.so*")) + glob.glob(os.path.join(root, "*.so*"))):
            for directory in runpath(obj):
                candidate = os.path.join(directory, soname)
                if os.path.exists(candidate):
                    return candidate, obj
    return None
