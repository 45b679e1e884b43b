"""Validation records: which image IDs passed (or failed) their smoke test, on which host.

One JSON file per image ID under ``<state_dir>/validations/``, written atomically. ``envgen run``
and ``envgen images`` read them; ``envgen build`` and ``envgen smoke`` write them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from envgen.errors import no_space
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
        """Write the record atomically (a full disk keeps the old record or none, never half of one)."""
        path = self._path(validation.image_id)
        try:
            write_atomically(path, json.dumps(asdict(validation), indent=2, sort_keys=True))
        except OSError as exc:
            full = no_space(exc, path, f"the smoke test's record of image {validation.image_id[:19]} ("
                                       f"{validation.status}); the image is not counted as validated",
                            fix=f"free space on the file system of {self.dir}, then run `envgen smoke` on the image")
            if full is None:
                raise
            raise full from None
        return path

    def get(self, image_id: str) -> Validation | None:
        """The record of ``image_id``; None when there is none, or it cannot be read (``damaged`` says which)."""
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

    def damaged(self, image_id: str) -> str | None:
        """One line when ``image_id`` has a record that cannot be read (cut short by a full disk, edited): what it
        means and how to validate the image again; None when its record reads, or there is none."""
        path = self._path(image_id)
        if not path.is_file() or self.get(image_id) is not None:
            return None
        return (f"its validation record {path} is damaged (not a record envgen wrote), so whether it passed its smoke "
                "test cannot be told: it counts as not validated")
