"""pydantic's compiled validators and serialisers of record types, kept in envgen's cache directory between runs.

A record validates and dumps through pydantic (``envgen.records``): its first use in a process generates its schema,
which imports pydantic's schema machinery (~0.1 s) and builds the schema (up to ~0.05 s for the profile). `envgen
render` of a profile the caches serve needs a few types (the user config, the profile, its mirrors, the probe's
expectations) and nothing else of pydantic: restoring their compiled validators and serialisers (pydantic_core
objects, pickled; unpickling rebuilds them from the core schema without pydantic) keeps pydantic out of the process.

One file per set of types (``compiled-<key>.pickle``), the key a SHA-256 over the interpreter's version, pydantic's
version file, ``records.py`` and the types' names. Inside, beside the compiled objects, the SHA-256 of every module
in the packages that define one of the types or a record type they hold (found when the file is written; the whole
package, since a type's patterns, literals and defaults may be written in a sibling module, such as
``profile/values.py`` for the profile's): a file whose modules changed is not used, and the schemas are generated as
usual, then written again.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envgen.files import write_atomically
from envgen.kb.cache import pydantic_version
from envgen.records import Record, adapter, records_in, use_compiled

_PREFIX = "compiled-"


def _target(directory: Path, classes: Sequence[type[Record]]) -> Path:
    digest = hashlib.sha256(f"{sys.version_info[:3]}\0".encode() + pydantic_version() + b"\0")
    digest.update(Path(sys.modules[Record.__module__].__file__ or "").read_bytes())
    digest.update("\0".join(f"{cls.__module__}.{cls.__qualname__}" for cls in classes).encode())
    return directory / f"{_PREFIX}{digest.hexdigest()[:32]}.pickle"


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
    if directory is None:
        return False
    try:
        entry: dict[str, Any] = pickle.loads(_target(directory, classes).read_bytes())
        if any(_digest(path) != digest for path, digest in entry["files"]):
            return False
        for cls in classes:
            validator, serializer = entry["compiled"][f"{cls.__module__}.{cls.__qualname__}"]
            use_compiled(cls, validator, serializer)
    except Exception:  # noqa: BLE001 - absent, torn, from other code or unreadable: built as usual
        return False
    return True


def keep(directory: Path | None, classes: Sequence[type[Record]]) -> None:
    """Write the compiled validators and serialisers of ``classes`` into ``directory`` (generating the schemas not
    built yet); a cache that cannot be written (read-only home) is simply not kept."""
    if directory is None:
        return
    target = _target(directory, classes)
    with contextlib.suppress(Exception):  # a validator that cannot be pickled or written is built again next time
        compiled = {f"{cls.__module__}.{cls.__qualname__}": (adapter(cls).validator, adapter(cls).serializer)
                    for cls in classes}
        files = [(path, _digest(path)) for path in _modules(classes)]
        write_atomically(target, pickle.dumps({"files": files, "compiled": compiled}, protocol=pickle.HIGHEST_PROTOCOL))
