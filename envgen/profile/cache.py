"""A cache of loaded profiles, so `envgen check` does not parse, merge, normalise and validate the same YAML on
every run (pydantic builds the profile's validators on first use: a third of what loading costs).

One file per profile reference (``profile-<sha>.pickle`` beside the KB cache). It is served only when everything
that decides what ``load_profile`` returns is unchanged: the bytes of the profile file and of every file its
`extends` chain read, that each `extends` reference still finds the same file, the profile layer's code, the
interpreter and pydantic versions, and the knowledge base it was loaded with (its cache key: the framework names
lifted out of packages.pip, and the base families, are its files). Anything else loads from YAML and rewrites
the entry. A profile that fails to load is never cached, so its errors are always the loader's own.

Beside the entries, the profile's compiled pydantic validator (``validator-profile-<salt>.pickle``, one file, made
on the first load with this code): loading an edited profile restores it instead of generating pydantic's schema
again (~0.15 s), so a check after an edit imports pydantic_core but not pydantic's schema machinery.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.files import CACHE_DAYS, prune_stale, write_atomically
from envgen.profile.loader import LoadedProfile, find_profile, load_source
from envgen.records import has_validator, use_validator, validator_bytes

if TYPE_CHECKING:
    from envgen.kb.knowledge import KnowledgeBase

_PREFIX = "profile-"
_VALIDATOR = "validator-profile-"
MAX_AGE_DAYS = CACHE_DAYS  # files.prune_stale's
Used = list[tuple[str, Path]]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _salt(kb_key: str) -> str:
    """The profile layer's code, and the KB the profile read (its key covers the interpreter and pydantic versions)."""
    digest = hashlib.sha256(f"{kb_key}\0".encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _fresh(entry: object, salt: str, env: Mapping[str, str] | None) -> LoadedProfile | None:
    if not (isinstance(entry, dict) and entry.get("salt") == salt and isinstance(entry.get("profile"), LoadedProfile)):
        return None
    for ref, path in entry["used"]:
        if find_profile(ref, env).path != path:  # an `extends` now finds another file (a new one shadows it)
            return None
    for path, digest in entry["files"]:
        if _digest(path) != digest:
            return None
    profile: LoadedProfile = entry["profile"]
    return profile


def load_profile_cached(ref: str, directory: Path | None, kb: KnowledgeBase, kb_key: str,
                        env: Mapping[str, str] | None = None) -> LoadedProfile:
    """``load_profile(ref, env, kb)``, served from ``directory`` when a fresh entry is there (None: no cache)."""
    source = find_profile(ref, env)
    if directory is None:
        return load_source(source, env, kb, [])
    search = (os.environ if env is None else env).get("ENVGEN_PROFILE_PATH", "")
    name = hashlib.sha256(f"{ref}\0{source.path}\0{search}".encode()).hexdigest()[:32]
    target, salt = directory / f"{_PREFIX}{name}.pickle", _salt(kb_key)
    try:
        found = _fresh(pickle.loads(target.read_bytes()), salt, env)
        if found is not None:
            return found
    except Exception:  # noqa: BLE001 - absent, torn, from other code, or a file now unreadable: load it afresh
        pass
    used: Used = []
    ready = has_validator(LoadedProfile) or _restore_validator(directory, salt)
    try:
        profile = load_source(source, env, kb, used)
    finally:  # kept for the next edit also when this profile has errors (the validator was built all the same)
        if not ready and has_validator(LoadedProfile):
            _keep_validator(directory, salt)
    files = [source.path, *(path for _, path in used)]
    entry = {"salt": salt, "used": used, "files": [(path, _digest(path)) for path in files], "profile": profile}
    with contextlib.suppress(OSError):  # a cache that cannot be written (read-only home) is simply not kept
        write_atomically(target, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
        prune_stale(target, f"{_PREFIX}*.pickle")
    return profile


def _validator_file(directory: Path, salt: str) -> Path:
    return directory / f"{_VALIDATOR}{salt[:32]}.pickle"


def _restore_validator(directory: Path, salt: str) -> bool:
    """The profile's compiled validator from the last load with the same code (the salt covers the record code,
    the profile layer, Python and pydantic), so loading an edited profile builds no pydantic schema; False when
    there is none to restore."""
    try:
        use_validator(LoadedProfile, _validator_file(directory, salt).read_bytes())
    except Exception:  # noqa: BLE001 - absent, torn or from other code: the validator is built as usual
        return False
    return True


def _keep_validator(directory: Path, salt: str) -> None:
    target = _validator_file(directory, salt)
    with contextlib.suppress(Exception):  # a validator that cannot be pickled or written is simply built again
        write_atomically(target, validator_bytes(LoadedProfile))
        for old in directory.glob(f"{_VALIDATOR}*.pickle"):
            if old != target:
                old.unlink(missing_ok=True)

