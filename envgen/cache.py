"""The one keyed store under everything envgen keeps between runs: the loaded KB and profiles, compiled validators,
parsed YAML, what a Docker CLI says of itself, render's check verdict.

An entry is one file ``<kind><key>.<suffix>`` in one directory (``cache_dir``: ``ENVGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/envgen``; ``ENVGEN_NO_CACHE=1``: none, every read misses and nothing is written). Its key is a
SHA-256 over envgen's version, the kind and every input that decides the value (``Store.key``): a changed input
gives another key, so an entry is never served for inputs it was not made from. That is the one invalidation rule;
the rest is housekeeping: when an entry is written, the entries of its kind not written for the kind's ``keep_days``
are pruned (0: only the newest is kept, for big values such as the KB). Writes are atomic (``files.write_atomically``):
a reader sees an old entry or a new one, never half of one; an entry that cannot be read or decoded is a miss, and
a cache that cannot be written (a read-only home) is simply not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen import __version__
from envgen.files import CACHE_DAYS, prune_stale, write_atomically

MISSING: Any = object()  # what ``Store.get`` returns for an entry that is absent or unreadable


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where the store lives for this environment, or None when ``ENVGEN_NO_CACHE`` is set."""
    if env.get("ENVGEN_NO_CACHE", "").strip().lower() in ("1", "true", "yes"):
        return None
    if env.get("ENVGEN_CACHE_DIR"):
        return Path(env["ENVGEN_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "envgen"


def file_digest(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def package_file(package: str, name: str | None = None) -> bytes:
    """A package's ``__init__.py`` (or the file ``name`` beside it), found without importing the package: its
    version, for a key (importing pydantic is ~0.1 s)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return f"no {package}".encode()
    try:
        return (Path(spec.origin) if name is None else Path(spec.origin).with_name(name)).read_bytes()
    except OSError:
        return b"unreadable"


def _pickle(value: Any) -> bytes:
    import pickle

    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickle(data: bytes) -> Any:
    import pickle

    return pickle.loads(data)


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value).encode()


def _unjson(data: bytes) -> Any:
    import json

    return json.loads(data)


CODECS: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = {
    "pickle": (_pickle, _unpickle), "json": (_json, _unjson)}


@dataclass(frozen=True)
class Store:
    """The entries of one kind in ``directory`` (None: no cache)."""

    directory: Path | None
    kind: str  # the entries' name prefix: "kb-", "profile-", ...
    codec: str = "pickle"  # or "json"
    keep_days: int = CACHE_DAYS

    def key(self, *parts: bytes | str) -> str:
        """The key of the inputs ``parts`` (each a text or bytes, in a fixed order)."""
        digest = hashlib.sha256(f"{__version__}\0{self.kind}".encode())
        for part in parts:
            digest.update(b"\0" + (part.encode() if isinstance(part, str) else part))
        return digest.hexdigest()[:32]

    def path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{self.kind}{key}.{self.codec}"

    def get(self, key: str) -> Any:
        """The value kept under ``key``, or MISSING (absent, torn, written by other code: any failure to decode)."""
        path = self.path(key)
        if path is None:
            return MISSING
        try:
            return CODECS[self.codec][1](path.read_bytes())
        except Exception:  # noqa: BLE001 - absent, torn or from other code: a miss, made again
            return MISSING

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` under ``key`` and prune this kind's stale entries; nothing when it cannot be encoded or
        written."""
        path = self.path(key)
        if path is None:
            return
        with contextlib.suppress(Exception):  # a value that cannot be encoded or written is made again next time
            write_atomically(path, CODECS[self.codec][0](value))
            prune_stale(path, f"{self.kind}*.{self.codec}", self.keep_days)
