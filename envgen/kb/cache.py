"""A cache of the validated knowledge base, so `envgen check` does not parse and validate every YAML row on
each run.

The cache file is named after a SHA-256 over everything that decides what ``load_kb`` returns: the data
files (names and bytes), the source of the modules that define and validate the rows, and the Python and
pydantic versions. Any edit gives a new key, so a stale cache is never read; it cannot change a verdict.
Writers put a private temporary file next to the target and ``os.replace`` it into place (atomic on POSIX),
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

from envgen.kb.knowledge import KnowledgeBase
from envgen.paths import kb_data_dir

# modules whose code shapes the loaded rows: a change in any of them invalidates the cache
_CODE = ("models.py", "loader.py", "knowledge.py", "validate.py", "versions.py", "cache.py", "libraries.py",
         "pypackages.py", "specifiers.py")
_PREFIX = "kb-"


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
    import pydantic

    digest = hashlib.sha256()
    digest.update(f"{sys.version_info[:3]}|{pydantic.VERSION}\0".encode())
    code_dir = Path(__file__).resolve().parent
    for label, path in [(f"code/{n}", code_dir / n) for n in _CODE] + [
        (f"data/{p.name}", p) for p in sorted(data_dir.glob("*.yaml"))
    ]:
        digest.update(label.encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def load_kb_cached(directory: Path | None, data_dir: Path | None = None) -> KnowledgeBase:
    """``load_kb(data_dir)``, served from ``directory`` when a cache for the same inputs is there."""
    from envgen.kb.loader import load_kb

    data = data_dir if data_dir is not None else kb_data_dir()
    if directory is None or not data.is_dir():
        return load_kb(data)
    target = directory / f"{_PREFIX}{cache_key(data)[:32]}.pickle"
    try:
        cached = pickle.loads(target.read_bytes())
        if isinstance(cached, KnowledgeBase):
            return cached
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        pass  # absent, torn by a foreign writer, or from other code: load from YAML and rewrite
    kb = load_kb(data)
    _write(directory, target, kb)
    return kb


def _write(directory: Path, target: Path, kb: KnowledgeBase) -> None:
    """Atomic replace; a cache that cannot be written (read-only home) is simply not kept."""
    import tempfile

    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".kb-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(kb, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        for old in directory.glob(f"{_PREFIX}*.pickle"):
            if old != target:
                old.unlink(missing_ok=True)
    except OSError:
        return
