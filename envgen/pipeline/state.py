"""Validation records: which image IDs passed (or failed) their smoke test, on which host.

One JSON file per image ID under ``<state_dir>/validations/``, written atomically. ``envgen run``
and ``envgen images`` read them; ``envgen build`` and ``envgen smoke`` write them.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


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
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self._path(validation.image_id)
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(validation), handle, indent=2, sort_keys=True)
        os.replace(tmp, path)
        return path

    def get(self, image_id: str) -> Validation | None:
        path = self._path(image_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Validation(**data)
        except (OSError, ValueError, TypeError):
            return None
