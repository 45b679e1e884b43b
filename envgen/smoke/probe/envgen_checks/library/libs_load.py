"""Library tier of the envgen probe: one soname loaded with ctypes as a framework would, its path,
version and shadowed copies, and the words for what went wrong.

Standard library only; Python 3.7+.
"""

import os

from ..core.common import CaptureStderr, Fail
from .libs_runpath import through_runpath
from .libs_search import copies_of, loaded_path, search_path
from .libs_version import _version_of_file, distribution_of, reported_version, version_from_file_name
from ..core.versions import version_parts


def _ctypes():
    try:
        import ctypes
        return ctypes
    except Exception as exc:  # noqa: BLE001 - a Python built without ctypes/libffi
        raise Fail("library tier cannot run: ctypes cannot be imported (%s): no library can be loaded, "
                   "so nothing is proved" % exc)


def _at_least(actual, minimum):
    """'' when ``actual`` satisfies ``minimum`` (same major, equal or newer minor), else why not."""
    want, have = version_parts(minimum), version_parts(actual)
    if not want or not have:
        return ""
    if have[0] != want[0]:
        return "wrong major"
    if have[:len(want)] < want:
        return "older than %s" % minimum
    return ""


def _load(ctypes, soname, preloaded, record):
    """(the loaded library, the file given to the loader) or (None, None) with record['problem'] and ['error'] set.
    A bare soname the loader cannot find is looked for where the needing framework's own dlopen would: its
    RUNPATH (it opens some libraries lazily, at first use: libs_runpath)."""
    try:
        with CaptureStderr():
            return ctypes.CDLL(preloaded or soname), preloaded
    except OSError as exc:
        text = str(exc)
        found = through_runpath(soname, record["needed_by"]) if "No such file" in text and not preloaded else None
        if found is None:
            record["problem"], record["error"] = ("missing" if "No such file" in text else "refused"), text
            return None, None
    record["runpath_of"] = found[1]
    try:
        with CaptureStderr():
            return ctypes.CDLL(found[0]), found[0]
    except OSError as again:
        record["problem"], record["error"] = "refused", str(again)
        return None, None


def check_library(ctx, item, cache):
    """Load one soname (``cache``: the ld.so cache, ``ld_cache()``); returns the record. Raises nothing:
    failures are in record['problem']."""
    ctypes = _ctypes()
    soname = item["soname"]
    record = {"soname": soname, "family": item.get("family"), "needed_by": item.get("needed_by") or [],
              "min_version": item.get("min_version"), "providers": item.get("providers") or []}
    copies = copies_of(soname, cache)
    record["copies"] = copies
    searched = search_path()
    record["searched"] = searched
    lib, preloaded = _load(ctypes, soname, item.get("loaded_from"), record)
    if lib is None:
        return record
    path = loaded_path(ctypes, lib, soname) or preloaded
    record["path"] = path
    version, how = reported_version(ctypes, lib, ctx.library_table["families"].get(item.get("family"), {}))
    if version is None:
        record["version_call"] = how
        dist = distribution_of(path) if path else None
        if dist is not None:
            version, how = dist[1], "distribution %s %s (the library's call: %s)" % (dist[0], dist[1], how)
        else:
            version, how = version_from_file_name(path or soname), "file name (the library's call: %s)" % how
    record["version"] = version
    record["version_source"] = how
    if path and len(copies) > 1:
        real = os.path.realpath(path)
        record["shadowed"] = [{"path": c, "version": _version_of_file(c)}
                              for c in copies if os.path.realpath(c) != real]
    why = _at_least(version, item.get("min_version")) if item.get("min_version") else ""
    if why:
        record["problem"] = why
    return record


def _provider_text(record):
    return " or ".join(record["providers"]) if record["providers"] else "the distribution that ships it"


def describe_problem(record):
    soname, users = record["soname"], ", ".join(record["needed_by"]) or "the profile"
    if record["problem"] == "missing":
        return ("cannot load %s (needed by %s): %s; searched LD_LIBRARY_PATH=%s and the ld.so cache; "
                "provided by %s; %s would run on the CPU"
                % (soname, users, record["error"], ":".join(record["searched"]) or "(unset)",
                   _provider_text(record), users))
    if record["problem"] == "refused":
        return ("ctypes refuses to load %s (needed by %s): %s; the library tier cannot prove it; provided by %s"
                % (soname, users, record["error"], _provider_text(record)))
    return ("library version mismatch: %s at %s reports %s (%s), %s needs >= %s (%s); provided by %s"
            % (soname, record.get("path"), record.get("version"), record.get("version_source"), users,
               record.get("min_version"), record["problem"], _provider_text(record)))
