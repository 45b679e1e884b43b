"""Library tier of the envgen probe: the version a loaded library reports (its own call), else the
version of the wheel that ships it, else what its file name says.

Standard library only; Python 3.7+.
"""

import os
import re

from ..core.versions import cudnn_text

_PROPERTY_MAJOR, _PROPERTY_MINOR, _PROPERTY_PATCH = 0, 1, 2


def _decode(kind, number):
    if kind == "cuda":  # 11080 -> 11.8
        return "%d.%d" % (number // 1000, (number % 1000) // 10)
    if kind in ("cudnn", "nccl"):  # 8600 -> 8.6.0, 90100 -> 9.1.0; NCCL 21605 -> 2.16.5, before 2.9: 2708 -> 2.7.8
        return cudnn_text(number)
    if kind == "size_t_mmmpp":  # cublasLt: 111103 -> 11.11.3
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return str(number)


def reported_version(ctypes, lib, family):
    """(version text, how) from the library's own call; (None, why not) when it cannot answer."""
    call = family.get("version_call")
    decode = family.get("decode")
    if not call:
        return None, "no version call known"
    try:
        func = getattr(lib, call)
    except AttributeError:
        return None, "%s not exported" % call
    try:
        if decode == "property":
            parts = []
            for kind in (_PROPERTY_MAJOR, _PROPERTY_MINOR, _PROPERTY_PATCH):
                value = ctypes.c_int(0)
                status = func(ctypes.c_int(kind), ctypes.byref(value))
                if status != 0:
                    return None, "%s returned status %d" % (call, status)
                parts.append(value.value)
            return "%d.%d.%d" % tuple(parts), call
        if decode in ("cudnn", "size_t_mmmpp"):
            func.restype = ctypes.c_size_t
            number = int(func())
        else:
            value = ctypes.c_int(0)
            status = func(ctypes.byref(value))
            if status != 0 or value.value == 0:
                return None, "%s returned error %d (value %d)" % (call, status, value.value)
            number = value.value
    except Exception as exc:  # noqa: BLE001 - a call that crashes on this library: fall back
        return None, "%s failed: %s" % (call, exc)
    if number <= 0:
        return None, "%s returned %d" % (call, number)
    return _decode(decode, number), call


def distribution_of(path):
    """(name, version) of the installed distribution that ships ``path``, or None (Python 3.8+)."""
    try:
        from importlib import metadata  # novermin - Python 3.7 falls back to the file name
    except ImportError:
        return None
    real = os.path.realpath(path)
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "")
        if not name.lower().startswith("nvidia-"):
            continue
        for item in dist.files or ():
            if os.path.basename(str(item)) != os.path.basename(path) and \
                    os.path.basename(str(item)) != os.path.basename(real):
                continue
            try:
                located = os.path.realpath(str(dist.locate_file(item)))
            except Exception:  # noqa: BLE001
                continue
            if located == real:
                return name, dist.version
    return None


def _version_of_file(path):
    dist = distribution_of(path)
    return dist[1] if dist else version_from_file_name(path)


def version_from_file_name(path):
    """libcudart.so.11.8.89 -> '11.8.89'; libcudnn.so.8 -> '8' (only what the name says)."""
    found = re.search(r"\.so\.([0-9][0-9.]*)$", os.path.basename(os.path.realpath(path)))
    return found.group(1) if found else None
