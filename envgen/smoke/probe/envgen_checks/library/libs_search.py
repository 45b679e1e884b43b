"""Library tier of the envgen probe: where a soname resolves (LD_LIBRARY_PATH, the ld.so cache,
NVIDIA's wheel directories) and which file the loader mapped.

Standard library only; Python 3.7+.
"""

import glob
import os
import re
import sys


def search_path():
    """The directories of LD_LIBRARY_PATH, in order: where dlopen looks for a bare soname before the ld.so
    cache and the default directories (for the diagnosis)."""
    return [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]


def ld_cache():
    """The ld.so cache, {soname: [paths]} in its order (``ldconfig -p``, read once per run); {} without it."""
    cache = {}
    try:
        import subprocess

        output = subprocess.run(["ldconfig", "-p"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, timeout=10).stdout
    except Exception:  # noqa: BLE001 - no ldconfig: the cache is not consulted
        return cache
    for line in output.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2:
            cache.setdefault(parts[0].split(" ")[0], []).append(parts[1].strip())
    return cache


def copies_of(soname, cache):
    """Every file named ``soname`` on the search path, the ld.so cache (``ld_cache()``) and NVIDIA's wheel
    directories, in search order, one entry per distinct file."""
    candidates = [os.path.join(d, soname) for d in search_path()]
    candidates += cache.get(soname, [])
    for site in _site_dirs():
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", soname)))
    candidates += [os.path.join(d, soname) for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64",
                                                      "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64")]
    seen, copies = set(), []
    for path in candidates:
        if not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        copies.append(path)
    return copies


def _site_dirs():
    dirs = []
    for entry in sys.path:
        if entry.endswith("site-packages") and os.path.isdir(os.path.join(entry, "nvidia")):
            dirs.append(entry)
    return dirs


def loaded_path(ctypes, lib, soname):
    """The file the dynamic loader mapped for ``lib`` (dlinfo's link map), else /proc/self/maps."""
    try:
        class LinkMap(ctypes.Structure):
            _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

        libc = ctypes.CDLL(None)
        dlinfo = libc.dlinfo
        pointer = ctypes.POINTER(LinkMap)()
        if dlinfo(ctypes.c_void_p(lib._handle), 2, ctypes.byref(pointer)) == 0 and pointer:  # RTLD_DI_LINKMAP
            name = pointer.contents.l_name
            if name:
                return name.decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - no dlinfo: read the maps
        pass
    return mapped_paths().get(soname)


def mapped_paths(pattern=r"lib(cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|cudnn|nccl|nvrtc|"
                          r"nvJitLink|cupti)\.so[.0-9]*$"):
    """Libraries mapped into this process now, {file name: path}: what a framework really loaded."""
    found = {}
    regex = re.compile(pattern)
    try:
        with open("/proc/self/maps", "r") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) < 6:
                    continue
                path = fields[-1]
                if regex.search(os.path.basename(path)):
                    found.setdefault(os.path.basename(path), path)
    except OSError:
        pass
    return found
