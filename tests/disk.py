"""The suite keeps its own disk use bounded, so that a machine with less free disk than a developer's still runs it.

The engine and pipeline tests build real framework images (a100-pypi and its CUDA 12 twin ~5.4 GB each,
cpu-smoke ~2.7 GB) and BuildKit keeps every layer in its build cache. Left alone, one session grew the disk by
more than 25 GB; on a machine whose disk ran full the session ended in a pytest INTERNALERROR with no test named
(its capture files could not be written). So, after every test module that uses the engine:

- the images the module left in the session's own namespace are removed (no later module reads them: image
  fixtures are module-scoped);
- when the engine's disk or the temp dir then has less than ``ENVGEN_TEST_DISK_LOW_GB`` free (default 25: the
  largest module, a100-pypi and its twin built, pushed and pulled, grew the disk by ~20 GB), BuildKit's build
  cache is cut down to ``ENVGEN_TEST_DISK_KEEP_GB`` (default 4): it is a cache, later builds refill it. Each cut
  is one line in the terminal report, with the free space before and after.

The session's header line states the free space it started with, so a run that still runs out says how much it had.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

GB = 1024**3
LOW_ENV = "ENVGEN_TEST_DISK_LOW_GB"
LOW_GB = 25
KEEP_ENV = "ENVGEN_TEST_DISK_KEEP_GB"


def _gb_setting(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def engine_root(client: Any) -> Path | None:
    """The engine's storage directory when it lies on this machine's file system (Docker, Podman, Docker 26)."""
    try:
        root = client.info().get("DockerRootDir") or ""
    except Exception:  # an engine that answers no info: nothing to measure
        return None
    return Path(root) if root and Path(root).is_dir() else None


def free_gb(path: Path) -> float:
    return shutil.disk_usage(path).free / GB


def watched(client: Any) -> list[Path]:
    """The directories whose free space the suite watches: the engine's storage and the temp dir."""
    root = engine_root(client)
    return [p for p in (root, Path(tempfile.gettempdir())) if p is not None]


def lowest_free(client: Any) -> tuple[float, Path]:
    return min((free_gb(p), p) for p in watched(client))


def header(client: Any) -> str:
    parts = [f"{p}: {free_gb(p):.1f} GB free" for p in watched(client)]
    low = _gb_setting(LOW_ENV, LOW_GB)
    return "disk: " + "; ".join(parts) + f" (the build cache is cut when under {low:g} GB, tests/disk.py)"


def after_module(client: Any, namespace: str) -> str | None:
    """Remove the module's images in ``namespace``; cut the build cache when the disk runs low. A line for the
    report when the cache was cut, else None."""
    from tests.isolation import remove_namespace_tags

    remove_namespace_tags(client, namespace)
    before, where = lowest_free(client)
    if before >= _gb_setting(LOW_ENV, LOW_GB):
        return None
    keep = int(_gb_setting(KEEP_ENV, 4) * GB)
    try:
        client.api.prune_builds(keep_storage=keep, all=True)
    except Exception as exc:  # Podman's API may lack /build/prune: say so, the run goes on
        return f"disk: {before:.1f} GB free under {where}; cutting the build cache failed: {exc}"
    after, _ = lowest_free(client)
    return (f"disk: {before:.1f} GB free under {where}: build cache cut to {keep // GB} GB "
            f"(docker builder prune --all --keep-storage), {after:.1f} GB free now")
