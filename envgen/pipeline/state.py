"""Validation records: which image IDs passed (or failed) their smoke test, on which host.

One JSON file per image ID under ``<state_dir>/validations/``, written atomically. ``envgen run``
and ``envgen images`` read them; ``envgen build`` and ``envgen smoke`` write them.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``:
    a reader (another envgen) sees the old file or the new one, never half of one. ``mode``: the file's
    permissions when they should not be the temporary file's private 0600 (a lock file beside a profile)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class Validation:
    image_id: str
    status: str  # "pass" | "fail"
    mode: str  # "gpu" | "cpu-only" | "libraries"
    profile: str
    content_hash: str
    checked_at: str  # ISO 8601, UTC
    report: dict[str, Any]
    # what a pass proves: "libraries" (no GPU used), "gpu" (both tiers), "cpu" (CPU-only profile);
    # "" for a failure or a record written before the tiers
    tier: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"


class ValidationStore:
    def __init__(self, state_dir: Path) -> None:
        self.dir = Path(state_dir) / "validations"

    def _path(self, image_id: str) -> Path:
        return self.dir / (image_id.replace("sha256:", "") + ".json")

    def record(self, validation: Validation) -> Path:
        path = self._path(validation.image_id)
        write_atomically(path, json.dumps(asdict(validation), indent=2, sort_keys=True))
        return path

    def get(self, image_id: str) -> Validation | None:
        path = self._path(image_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Validation(**data)
        except (OSError, ValueError, TypeError):
            return None
