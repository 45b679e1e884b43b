"""What a check reports (:class:`Finding`) and what it knows about the host (:class:`HostSpec`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class HostSpec:
    """The machine the image is meant for: GPU names or "X.Y" compute capabilities, driver version."""

    gpus: list[str] = field(default_factory=list)
    driver: str | None = None
    platform: Literal["linux", "windows"] = "linux"


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str  # one line
    fix: str
    source: str  # the knowledge-base row it rests on (cite())

    def to_json(self) -> dict[str, str]:
        return asdict(self)
