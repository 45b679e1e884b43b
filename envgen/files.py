"""Writing one file so that a reader sees the old file or the new one, never half of one; a cache's old entries
pruned."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

USER_FILE = 0o644  # a file the user reads or edits (an export, a suggested profile, a lock file)
EXECUTABLE = 0o755


def write_atomically(path: Path, text: str | bytes, mode: int | None = None) -> None:
    """Write ``text`` (UTF-8, or bytes as they are) to a temporary file beside ``path``, flush it to disk, then
    rename it over ``path``: a reader (another envgen) sees the old file or the new one, never half of one.
    ``mode``: the file's permissions when they should not be the temporary file's private 0600 (USER_FILE,
    EXECUTABLE)."""
    import tempfile  # only a writer needs it (a cached `envgen check` writes nothing)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


CACHE_DAYS = 30  # a cache entry not written for this long is pruned when another is written


def prune_stale(keep: Path, pattern: str, days: int = CACHE_DAYS) -> None:
    """Remove the files beside ``keep`` that match ``pattern`` and were not written for ``days`` days: a cache with one
    entry per input would otherwise grow without bound (a pruned entry is made again when it is next needed). Called
    only when an entry is written, so a read served from the cache stats nothing else."""
    import time

    oldest = time.time() - days * 86400
    for old in keep.parent.glob(pattern):
        with contextlib.suppress(OSError):
            if old != keep and old.stat().st_mtime < oldest:
                old.unlink()
