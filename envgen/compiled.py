"""pydantic's compiled validators and serialisers of record types, kept in the store (``envgen.cache``).

A record validates and dumps through pydantic (``envgen.records``): its first use in a process generates its schema,
which imports pydantic's schema machinery (~0.1 s) and builds the schema (up to ~0.05 s for the profile). `envgen
render` of a profile the caches serve needs a few types (the user config, the profile, its mirrors, the probe's
expectations) and nothing else of pydantic; `envgen check` of an edited profile needs the profile's. Restoring their
compiled validators and serialisers (pydantic_core objects, pickled; unpickling rebuilds them from the core schema
without pydantic) keeps pydantic out of the process.

One entry per set of types (``compiled-<key>.pickle``), keyed by the interpreter's version, pydantic's version file,
``records.py`` and the types' names. Inside, beside the compiled objects, the SHA-256 of every module in the packages
that define one of the types or a record type they hold (found when the entry is written; the whole package, since a
type's patterns, literals and defaults may be written in a sibling module, such as ``profile/values.py`` for the
profile's): an entry whose modules changed is not used, and the schemas are generated as usual, then written again.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envgen.cache import Store, file_digest, package_file
from envgen.records import R, Record, adapter, has_validator, records_in, use_compiled


def _entry(directory: Path | None, classes: Sequence[type[Record]]) -> tuple[Store, str]:
    store = Store(directory, "compiled-")
    if directory is None:
        return store, ""
    return store, store.key(f"{sys.version_info[:3]}", package_file("pydantic", "version.py"),
                            Path(sys.modules[Record.__module__].__file__ or "").read_bytes(),
                            "\0".join(f"{cls.__module__}.{cls.__qualname__}" for cls in classes))


def _modules(classes: Sequence[type[Record]]) -> list[str]:
    """The files of the packages whose modules define ``classes`` and every record type their fields hold."""
    seen: set[type[Record]] = set()
    todo = list(classes)
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo += [nested for view in cls.model_fields.values() for nested in records_in(view.annotation)]
    folders = {Path(sys.modules[cls.__module__].__file__ or "").parent for cls in seen}
    return sorted(str(path) for folder in folders for path in folder.glob("*.py"))


def restore(directory: Path | None, classes: Sequence[type[Record]]) -> bool:
    """Give ``classes`` the validators and serialisers kept in ``directory`` (None: no cache); False when there are
    none for this code (absent, torn, or written by other code): the schemas are then generated on first use."""
    store, key = _entry(directory, classes)
    try:
        entry: dict[str, Any] = store.get(key)
        if any(file_digest(path) != digest for path, digest in entry["files"]):
            return False
        for cls in classes:
            validator, serializer = entry["compiled"][f"{cls.__module__}.{cls.__qualname__}"]
            use_compiled(cls, validator, serializer)
    except Exception:  # noqa: BLE001 - a miss, torn, from other code or a module now unreadable: built as usual
        return False
    return True


def keep(directory: Path | None, classes: Sequence[type[Record]]) -> None:
    """Write the compiled validators and serialisers of ``classes`` into ``directory`` (generating the schemas not
    built yet); a cache that cannot be written (read-only home) is simply not kept."""
    store, key = _entry(directory, classes)
    if directory is None:
        return
    try:
        compiled = {f"{cls.__module__}.{cls.__qualname__}": (adapter(cls).validator, adapter(cls).serializer)
                    for cls in classes}
        files = [(path, file_digest(path)) for path in _modules(classes)]
    except Exception:  # noqa: BLE001 - a validator that cannot be built here is built again next time
        return
    store.put(key, {"files": files, "compiled": compiled})


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON's own kinds throughout (so its JSON text tells every value apart: "5" from 5, 1
    from 1.0 and True)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return value is None or isinstance(value, (str, int, float, bool))


def validated(directory: Path | None, cls: type[R], data: Any, *inputs: str) -> R:
    """``cls.model_validate(data)``, kept in ``directory`` for data of JSON's kinds: the record validated before
    from the same data (its JSON text, mappings in their order) and ``inputs`` (whatever else the validation reads:
    a default computed from the environment, such as a path under the home directory) by the same code (the files
    of ``restore``'s entry, checked by digest) is served without importing pydantic_core; anything else (other
    data, other code, a torn entry) is validated, with the compiled validator restored or kept, and kept. Data that
    fails is never kept: its error is pydantic's own each time."""
    import json

    if directory is None or not _plain(data):
        return cls.model_validate(data)
    store = Store(directory, "validated-")
    # the JSON text in the data's own order: a mapping's order is part of the record (its dump, its iteration), so
    # reordered data is other data, validated and kept in its order
    key = store.key(_entry(directory, (cls,))[1], json.dumps(data), *inputs)
    with contextlib.suppress(Exception):  # absent, torn, from other code: validated below
        entry: dict[str, Any] = store.get(key)
        if isinstance(entry["value"], cls) and all(file_digest(path) == digest for path, digest in entry["files"]):
            return entry["value"]
    ready = has_validator(cls) or restore(directory, (cls,))
    value = cls.model_validate(data)
    if not ready:
        keep(directory, (cls,))
    store.put(key, {"files": [(path, file_digest(path)) for path in _modules((cls,))], "value": value})
    return value
