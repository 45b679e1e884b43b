"""One build of a profile at a time on this host.

Two `envgen build` of the same profile would build the same image twice, race to tag it, leave an
extra image behind and write the same build context directory (``<state_dir>/contexts/<profile>``,
replaced by every build so that a user's state does not pile up a copied wheelhouse per content). The
second one waits on a lock file in the state directory (``<state_dir>/build-locks/<profile>.lock``,
held with ``fcntl.flock``, so a crashed holder releases it with its process) and says whom it waits
for. When its turn comes, the image the first one validated is found and reused (`envgen build` looks
for it after taking the lock). Builds of different profiles run side by side.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path


def lock_path(state_dir: Path, profile_name: str) -> Path:
    return Path(state_dir) / "build-locks" / f"{profile_name}.lock"


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return "unknown"
    return text if text.isdigit() else "unknown"


@contextlib.contextmanager
def build_lock(state_dir: Path, profile_name: str,
               echo: Callable[[str], None] = lambda _line: None) -> Iterator[Path]:
    """Hold the build lock of ``profile_name``; waits (saying so) while another process holds it."""
    path = lock_path(state_dir, profile_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            echo(f"waiting for another build of {profile_name} (pid {_holder(fd)}) to finish; lock: {path}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (unlinking it would race with a waiter)
