"""Loaded profiles kept in the store (``envgen.cache``), so `envgen check` does not parse, merge, normalise and
validate the same YAML on every run (pydantic builds the profile's validators on first use: a third of what loading
costs).

One entry per profile reference (``profile-<key>.pickle``), keyed by the reference, the file it finds, the profile
search path, the profile layer's code and the knowledge base it was loaded with (its key: the framework names lifted
out of packages.pip, and the base families, are its files; it covers the interpreter and pydantic versions). Inside,
the SHA-256 of the profile file and of every file its `extends` chain read, and the file each `extends` reference
found: a changed file, or a reference that now finds another, loads from YAML and rewrites the entry. A profile that
fails to load is never kept, so its errors are always the loader's own.

The profile's compiled pydantic validator is kept too (``envgen.compiled``, made on the first load with this code):
loading an edited profile restores it instead of generating pydantic's schema again (~0.15 s), so a check after an
edit imports pydantic_core but not pydantic's schema machinery.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen import compiled
from envgen.cache import Store, file_digest
from envgen.profile.loader import LoadedProfile, find_profile, load_source
from envgen.records import has_validator

if TYPE_CHECKING:
    from envgen.kb.knowledge import KnowledgeBase

Used = list[tuple[str, Path]]


def _code() -> bytes:
    """The profile layer's code."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def _fresh(entry: object, env: Mapping[str, str] | None) -> LoadedProfile | None:
    if not (isinstance(entry, dict) and isinstance(entry.get("profile"), LoadedProfile)):
        return None
    for ref, path in entry["used"]:
        if find_profile(ref, env).path != path:  # an `extends` now finds another file (a new one shadows it)
            return None
    for path, digest in entry["files"]:
        if file_digest(path) != digest:
            return None
    profile: LoadedProfile = entry["profile"]
    return profile


def load_profile_cached(ref: str, directory: Path | None, kb: KnowledgeBase | None, kb_key: str,
                        env: Mapping[str, str] | None = None) -> LoadedProfile:
    """``load_profile(ref, env, kb)``, served from ``directory`` when a fresh entry is there (None: no cache)."""
    source = find_profile(ref, env)
    if directory is None:
        return load_source(source, env, kb, [])
    search = (os.environ if env is None else env).get("ENVGEN_PROFILE_PATH", "")
    store = Store(directory, "profile-")
    key = store.key(ref, str(source.path), search, kb_key, _code())
    try:
        found = _fresh(store.get(key), env)
        if found is not None:
            return found
    except Exception:  # noqa: BLE001 - from other code, or a file now unreadable: load it afresh
        pass
    used: Used = []
    ready = has_validator(LoadedProfile) or compiled.restore(directory, (LoadedProfile,))
    try:
        profile = load_source(source, env, kb, used)
    finally:  # kept for the next edit also when this profile has errors (the validator was built all the same)
        if not ready and has_validator(LoadedProfile):
            compiled.keep(directory, (LoadedProfile,))
    files = [source.path, *(path for _, path in used)]
    store.put(key, {"used": used, "files": [(path, file_digest(path)) for path in files], "profile": profile})
    return profile
