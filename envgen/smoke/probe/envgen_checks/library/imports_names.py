"""What a distribution installs that can be imported, read from its installed metadata (the import check's
names, imports.py).

The names come from RECORD (PEP 376/627: every file the installer wrote): a top-level directory holding
``__init__.py`` (a package), one holding Python or extension modules without it (a namespace package, as
``google`` of protobuf), a top-level ``.py`` or extension module. Never a ``*.libs`` directory of vendored shared
libraries (scikit-learn's ``scikit_learn.libs``), ``*.dist-info``, ``*.data``, ``__pycache__`` or a private
``_name``; ``top_level.txt`` is read only where there is no RECORD (an ``.egg-info``), and then only for names
that exist beside it (setuptools' metadata names a ``debian`` that Debian's build never installs; botorch's names
``build``, ``dist``, ``docs``, and its wheel ships setuptools' ``build/lib/`` folder, which is no module). A
module that fails only because a distribution named by one of its extras
(``Requires-Dist: aiohttp; extra == "d"``) is absent is the extra not being installed, not a break
(``needs_extra``). Standard library only, Python 3.7+.
"""

import csv
import os
import re

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MODULE_SUFFIXES = (".py", ".so", ".pyd")
# setuptools' own build folder, shipped by mistake in some wheels (botorch 0.18.1: build/lib/botorch/...)
_BUILD_LEFTOVER = re.compile(r"^build/(lib|bdist)[^/]*/")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")
_MISSING = re.compile(r"No module named '([^']+)'")
_IMPORT_ERROR = re.compile(r"^(ModuleNotFoundError|ImportError)\b")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _read_lines(path):
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        return handle.read().splitlines()


def record_paths(meta_dir):
    """The paths a RECORD lists (relative to the site directory), None where there is none."""
    record = os.path.join(meta_dir, "RECORD")
    if not os.path.isfile(record):
        return None
    return [row[0] for row in csv.reader(_read_lines(record)) if row]


def modules_of_paths(paths):
    """Importable top-level names among RECORD ``paths`` (see the module's docstring)."""
    names = set()
    for path in paths:
        parts = path.replace("\\", "/").split("/")
        head = parts[0]
        if _BUILD_LEFTOVER.match(path) or not parts[-1].endswith(_MODULE_SUFFIXES):
            continue
        if len(parts) == 1:
            if _IDENT.match(head.split(".")[0]):
                names.add(head.split(".")[0])
        elif all(_IDENT.match(part) for part in parts[:-1]):
            names.add(head)  # a package (its __init__.py) or a namespace holding modules, every folder importable
    return names


def _exists_beside(site, name):
    """True when ``name`` is a package, namespace or module file in the directory ``site``."""
    folder = os.path.join(site, name)
    if os.path.isdir(folder):
        return any(item.endswith(_MODULE_SUFFIXES) or os.path.isdir(os.path.join(folder, item))
                   for item in os.listdir(folder))
    try:
        items = os.listdir(site)
    except OSError:
        return False
    return any(item.split(".")[0] == name and item.endswith(_MODULE_SUFFIXES) for item in items)


def top_level_modules(meta_dir):
    """The importable top-level names a distribution installs, sorted (RECORD, else top_level.txt as it exists)."""
    paths = record_paths(meta_dir)
    if paths is not None and not any(p.startswith("__editable__") for p in paths):
        return sorted(modules_of_paths(paths))
    top = os.path.join(meta_dir, "top_level.txt")
    if not os.path.isfile(top):
        return []
    names = set(line.strip().replace("/", ".").split(".")[0] for line in _read_lines(top))
    site = os.path.dirname(meta_dir)
    editable = paths is not None
    return sorted(n for n in names if _IDENT.match(n) and (editable or _exists_beside(site, n)))


def extra_only_requirements(meta_dir):
    """canonical name -> extra, for every distribution the metadata requires only under an ``extra ==`` marker."""
    path = os.path.join(meta_dir, "METADATA")
    if not os.path.isfile(path):
        path = os.path.join(meta_dir, "PKG-INFO")
    if not os.path.isfile(path):
        return {}
    extras, core = {}, set()
    for line in _read_lines(path):
        if not line.startswith("Requires-Dist:"):
            if not line.strip():
                break  # the headers end at the first empty line; the description follows
            continue
        text = line.split(":", 1)[1]
        found = _REQUIREMENT.match(text)
        if not found:
            continue
        name = canonical(found.group(1))
        marker = _EXTRA.search(text.partition(";")[2])
        if marker:
            extras.setdefault(name, marker.group(1))
        else:
            core.add(name)
    return dict((name, extra) for name, extra in extras.items() if name not in core)


def _dist_names_for_module(module):
    """The distribution names a missing module is usually installed by: itself, python-X, pyX."""
    top = canonical(module.split(".")[0])
    return (top, "python-" + top, "py" + top)


def needs_extra(output, extras, installed):
    """(extra, missing module) when ``output`` ends in an ImportError that names a missing module (black re-raises
    ``No module named 'aiohttp'`` with its own advice) which only one of ``extras`` (extra_only_requirements)
    brings and which is not ``installed`` (canonical names); else None."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    if not lines or not _IMPORT_ERROR.match(lines[-1]):
        return None
    for module in _MISSING.findall(output):
        for name in _dist_names_for_module(module):
            if name in extras and name not in installed:
                return extras[name], module
    return None


_FOREIGN = re.compile(r"No module named '(?P<missing>[A-Za-z0-9_]+\.[A-Za-z0-9_.]+)'"
                      r"|cannot import name '[A-Za-z0-9_]+' from '(?P<source>[A-Za-z0-9_.]+)'")


def version_of(meta_dir):
    """The version in a metadata directory's name (``keras-3.15.1.dist-info`` -> "3.15.1"); "" without one."""
    stem = os.path.basename(meta_dir).rsplit(".", 1)[0]
    return stem.split("-")[1] if "-" in stem else ""


def owner_of(module, metadata, owners):
    """The installed distribution whose top-level modules hold ``module``; ``owners`` caches the map."""
    direct = metadata.get(canonical(module))
    if direct is not None and module in top_level_modules(direct):
        return canonical(module)
    if not owners:
        for dist, meta in sorted(metadata.items()):
            for name in top_level_modules(meta):
                owners.setdefault(name, dist)
    return owners.get(module)


def across_note(dist, output, metadata, owners):
    """The probe's line naming both packages where ``dist``'s import fails on a part of another installed
    distribution that the installed release of it does not have (tensorflow-addons importing keras.src.engine
    under Keras 3); "" otherwise. ``metadata``: canonical name -> metadata directory."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    found = _FOREIGN.search(lines[-1]) if lines else None
    if not found:
        return ""
    target = found.group("missing") or found.group("source")
    other = owner_of(target.split(".")[0], metadata, owners)
    if other is None or other == dist or dist not in metadata:
        return ""
    return ("envgen: %s %s was written for a release of %s other than %s: it imports %s, which %s %s does not have"
            % (dist, version_of(metadata[dist]), other, version_of(metadata[other]), target, other,
               version_of(metadata[other])))
