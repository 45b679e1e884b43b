"""A cache of the validated knowledge base, so `envgen check` does not parse and validate every YAML row on
each run.

The cache file is named after a SHA-256 over everything that decides what ``load_kb`` returns: the data
files (names and bytes), the source of the modules that define and validate the rows, and the Python and
pydantic versions (pydantic's own version file, read without importing pydantic: the rows are records that
unpickle without it, ``envgen.records``). Any edit gives a new key, so a stale cache is never read; it cannot
change a verdict.
Writers put a private temporary file next to the target and rename it into place (``envgen.files``, atomic on POSIX),
so concurrent writers never leave a torn file; a reader that finds an unreadable file loads from YAML.
Set ``ENVGEN_NO_CACHE=1`` to bypass it; ``ENVGEN_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/envgen``).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path

from envgen.files import write_atomically
from envgen.kb.knowledge import KnowledgeBase
from envgen.paths import kb_data_dir

_PREFIX = "kb-"


def code_files() -> list[Path]:
    """The code that shapes the loaded rows: every module of the ``kb`` package (the row models, wherever a new
    table puts its own, the loader, the validation, the queries); a change in any of them invalidates the cache.
    A directory listing, not a hand-kept list, so no row module can be left out."""
    here = Path(__file__).resolve().parent
    return [*sorted(here.glob("*.py")), here.parent / "records.py"]


def pydantic_version() -> bytes:
    """pydantic's version file (``VERSION = '2.x.y'``), found without importing pydantic (~0.1 s)."""
    import importlib.util

    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        return b"no pydantic"
    try:
        return Path(spec.origin).with_name("version.py").read_bytes()
    except OSError:
        return b"unreadable"


def cache_dir(env: Mapping[str, str]) -> Path | None:
    """Where the cache lives for this environment, or None when ``ENVGEN_NO_CACHE`` is set."""
    if env.get("ENVGEN_NO_CACHE", "").strip().lower() in ("1", "true", "yes"):
        return None
    if env.get("ENVGEN_CACHE_DIR"):
        return Path(env["ENVGEN_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "envgen"


def cache_key(data_dir: Path) -> str:
    """SHA-256 over the data files, the row code and the interpreter/pydantic versions."""
    digest = hashlib.sha256()
    digest.update(f"{sys.version_info[:3]}|".encode() + pydantic_version() + b"\0")
    for label, path in [(f"code/{p.name}", p) for p in code_files()] + [
        (f"data/{p.name}", p) for p in sorted(data_dir.glob("*.yaml"))
    ]:
        digest.update(label.encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def kb_for(env: Mapping[str, str] | None = None) -> KnowledgeBase:
    """The KB of a caller that was handed none (a library call outside a command's session,
    ``envgen.pipeline.session``): check's cache for ``env`` (the process's when None), YAML where it is off."""
    return load_kb_cached(cache_dir(os.environ if env is None else env))


def load_kb_cached(directory: Path | None, data_dir: Path | None = None) -> KnowledgeBase:
    """``load_kb(data_dir)``, served from ``directory`` when a cache for the same inputs is there."""
    return load_kb_keyed(directory, data_dir)[0]


def load_kb_keyed(directory: Path | None, data_dir: Path | None = None) -> tuple[KnowledgeBase, str]:
    """``load_kb_cached`` and the key of what it loaded (empty when the KB was read without a cache: a cache
    built on this KB, such as the profile cache, must not be kept then)."""
    data = data_dir if data_dir is not None else kb_data_dir()
    if directory is None or not data.is_dir():
        return _read(data), ""
    key = cache_key(data)
    target = directory / f"{_PREFIX}{key[:32]}.pickle"
    try:
        cached = pickle.loads(target.read_bytes())
        if isinstance(cached, KnowledgeBase):
            return cached, key
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        pass  # absent, torn by a foreign writer, or from other code: load from YAML and rewrite
    kb = _read(data)
    _write(directory, target, kb)
    return kb, key


def _read(data: Path) -> KnowledgeBase:
    """The KB from its YAML files (the YAML parser is imported only here: a cache hit never needs it)."""
    from envgen.kb.loader import load_kb

    return load_kb(data)


def _write(directory: Path, target: Path, kb: KnowledgeBase) -> None:
    """Atomic replace; a cache that cannot be written (read-only home) is simply not kept."""
    try:
        write_atomically(target, pickle.dumps(kb, protocol=pickle.HIGHEST_PROTOCOL))
        for old in directory.glob(f"{_PREFIX}*.pickle"):
            if old != target:
                old.unlink(missing_ok=True)
    except OSError:
        return
