"""Validation records: which image IDs passed (or failed) their smoke test, on which host.

One JSON file per image ID under ``<state_dir>/validations/``, written atomically. ``envgen run``
and ``envgen images`` read them; ``envgen build`` and ``envgen smoke`` write them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from envgen.files import write_atomically


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
    # "built": an image envgen built (or pulled, or loaded); "inspected": any other image `envgen smoke` probed,
    # never sealed or tagged
    origin: str = "built"

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

    def last_for(self, profile: str, content_hash: str) -> Validation | None:
        """The newest record of an image built from ``profile`` at ``content_hash`` (a failed one is never
        tagged, so its record is how `envgen run PROFILE` learns why there is no image)."""
        found = []
        for path in self.dir.glob("*.json") if self.dir.is_dir() else ():
            record = self.get(path.stem)
            if record is not None and record.profile == profile and record.content_hash == content_hash:
                found.append(record)
        return max(found, key=lambda r: r.checked_at, default=None)
