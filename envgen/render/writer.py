"""Atomic output: write everything into a temporary directory beside the target, then rename.

An existing target is replaced only once the new context is complete; on any error nothing new
is left behind and the old target is untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from envgen.errors import RenderError

FILE_MODE = 0o644
EXEC_MODE = 0o755


def _place_wheel(source: Path, target: Path) -> None:
    """Hard-link when possible (same file system: instant, no copy), else copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _fill(root: Path, files: Mapping[str, bytes], executable: Iterable[str], wheels: Iterable[Path]) -> None:
    exec_set = set(executable)
    for rel, data in sorted(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(EXEC_MODE if rel in exec_set else FILE_MODE)
    wheel_dir = root / "wheels"
    wheel_dir.mkdir(exist_ok=True)
    for wheel in wheels:
        _place_wheel(wheel, wheel_dir / wheel.name)


def replace_directory(
    target: Path, files: Mapping[str, bytes], executable: Iterable[str] = (), wheels: Iterable[Path] = ()
) -> None:
    """Make ``target`` a directory holding exactly ``files`` (and ``wheels`` under wheels/): filled beside it, then
    renamed over it (one file is written with ``envgen.files.write_atomically``)."""
    target = target.absolute()
    if target.exists() and not target.is_dir():
        raise RenderError(f"output path {target} exists and is not a directory", fix="choose another -o DIR")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as exc:
        raise RenderError(f"cannot create a directory beside {target}: {exc.strerror}") from exc
    old: Path | None = None
    try:
        _fill(staging, files, executable, wheels)
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            old.rmdir()
            target.rename(old)
        staging.rename(target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not target.exists():
            old.rename(target)
            old = None
        if isinstance(exc, OSError):
            raise RenderError(f"cannot write the build context {target}: {exc}") from exc
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
