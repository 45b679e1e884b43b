"""Kernels and loaded libraries for the envgen probe: which entries of a compiled architecture list run
on a GPU, and the CUDA libraries mapped into this process.

Standard library only; runs on Python 3.7 and later (checked by a unit test with vermin).
"""

import re

_ARCH_RE = re.compile(r"^(sm|compute)_(\d+)(\d)([a-z]?)$")


def kernel_support(capability, arch_list):
    """Which entries of a compiled architecture list can run on a GPU of ``capability`` (major, minor).

    Returns (sass, ptx): machine code runs on the same major version with an equal or higher minor
    (``sm_90a`` only on exactly 9.0); PTX (``compute_XY``) is compiled by the driver for any GPU of
    equal or higher capability."""
    major, minor = int(capability[0]), int(capability[1])
    sass, ptx = [], []
    for arch in arch_list:
        found = _ARCH_RE.match(arch.strip())
        if not found:
            continue
        kind, arch_major, arch_minor, suffix = found.group(1), int(found.group(2)), int(found.group(3)), \
            found.group(4)
        if kind == "sm":
            if arch_major == major and (arch_minor == minor or (suffix != "a" and arch_minor < minor)):
                sass.append(arch)
        elif suffix != "a" and (arch_major, arch_minor) <= (major, minor):
            ptx.append(arch)
    return sass, ptx


_LIBRARY_RE = re.compile(r"/(lib(cudart|cublas|cublasLt|cudnn|nccl|cuda)\.so[.0-9]*)$")


def loaded_libraries():
    """CUDA libraries mapped into this process right now, {file name: path} (Linux only)."""
    found = {}
    try:
        with open("/proc/self/maps", "r") as handle:
            for line in handle:
                path = line.split()[-1] if line.strip() else ""
                match = _LIBRARY_RE.search(path)
                if match:
                    found[match.group(1)] = path
    except (OSError, IndexError):
        pass
    return found
