"""The validated knowledge base kept in the store (``envgen.cache``), so `envgen check` does not parse and validate
every YAML row on each run.

The key covers everything that decides what ``load_kb`` returns: the data files (names and bytes), the source of
the modules that define and validate the rows, the Python and pydantic versions (pydantic's own version file,
read without importing pydantic: the rows are records that unpickle without it, ``envgen.records``) and the YAML
parser's (PyYAML's ``__init__.py``, read without importing it). Any edit gives a
new key, so a stale KB is never read; only the newest entry is kept.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.cache import Store, package_file
from envgen.paths import kb_data_dir

if TYPE_CHECKING:  # the KB's classes are imported by a load (unpickled or read): its key alone needs none
    from envgen.kb.knowledge import KnowledgeBase

__all__ = ["cache_key", "code_files", "kb_for", "kb_key", "load_kb_cached", "load_kb_keyed", "parser_version",
           "pydantic_version"]


def code_files() -> list[Path]:
    """The code that shapes the loaded rows: every module of the ``kb`` package (the row models, wherever a new
    table puts its own, the loader, the validation, the queries); a change in any of them invalidates the cache.
    A directory listing, not a hand-kept list, so no row module can be left out."""
    here = Path(__file__).resolve().parent
    return [*sorted(here.glob("*.py")), here.parent / "records.py"]


def pydantic_version() -> bytes:
    """pydantic's version file (``VERSION = '2.x.y'``), found without importing pydantic (~0.1 s)."""
    return package_file("pydantic", "version.py")


def parser_version() -> bytes:
    """PyYAML's ``__init__.py`` (its ``__version__``, and whether libyaml's C loader is there), found without importing
    it: the parser decides which documents the data files are, as the row code decides which rows."""
    return package_file("yaml")


def cache_key(data_dir: Path) -> str:
    """The store's key over the data files, the row code and the interpreter/pydantic/PyYAML versions."""
    parts: list[bytes | str] = [f"{sys.version_info[:3]}", pydantic_version(), parser_version()]
    for label, path in [(f"code/{p.name}", p) for p in code_files()] + [
        (f"data/{p.name}", p) for p in sorted(data_dir.glob("*.yaml"))
    ]:
        parts += [label, path.read_bytes()]
    return Store(None, "kb-").key(*parts)


def kb_for(env: Mapping[str, str] | None = None) -> KnowledgeBase:
    """The KB of a caller that was handed none (a library call outside a command's session,
    ``envgen.pipeline.session``): check's cache for ``env`` (the process's when None), YAML where it is off."""
    from envgen.cache import cache_dir

    return load_kb_cached(cache_dir(os.environ if env is None else env))


def load_kb_cached(directory: Path | None, data_dir: Path | None = None) -> KnowledgeBase:
    """``load_kb(data_dir)``, served from ``directory`` when a cache for the same inputs is there."""
    return load_kb_keyed(directory, data_dir)[0]


def kb_key(directory: Path | None, data_dir: Path | None = None) -> str:
    """The key ``load_kb_keyed(directory, data_dir)`` loads under, without loading anything (empty: no cache)."""
    data = data_dir if data_dir is not None else kb_data_dir()
    return cache_key(data) if directory is not None and data.is_dir() else ""


def load_kb_keyed(directory: Path | None, data_dir: Path | None = None,
                  key: str | None = None) -> tuple[KnowledgeBase, str]:
    """``load_kb_cached`` and the key of what it loaded (empty when the KB was read without a cache: a cache
    built on this KB, such as the profile cache, must not be kept then). ``key``: ``kb_key(directory, data_dir)``
    where the caller computed it already."""
    data = data_dir if data_dir is not None else kb_data_dir()
    key = kb_key(directory, data) if key is None else key
    if not key:
        return _read(data), ""
    store = Store(directory, "kb-", keep_days=0)
    cached = store.get(key)
    from envgen.kb.knowledge import KnowledgeBase

    if isinstance(cached, KnowledgeBase):
        return cached, key
    kb = _read(data)
    if kb_key(directory, data) == key:  # kept only under the key of what was read: a key computed before an edit
        store.put(key, kb)              # (a session's, ``Session.kb_key``) would keep the edited KB under the old one
    return kb, key


def _read(data: Path) -> KnowledgeBase:
    """The KB from its YAML files (the YAML parser is imported only here: a cache hit never needs it)."""
    from envgen.kb.loader import load_kb

    return load_kb(data)
