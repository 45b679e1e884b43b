"""What a check reports (:class:`Finding`) and what it knows about the host (:class:`HostSpec`)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Literal

from envgen.errors import InputError

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
# an NVIDIA driver version as nvidia-smi reports it: 535.104.05, 418.87
_DRIVER_RE = re.compile(r"^\d+\.\d+(\.\d+)?$")


def parse_driver(value: str | None, option: str = "--driver") -> str | None:
    """The driver version, stripped; :class:`InputError` (exit 2) naming ``option`` when it is not digits and dots
    such as 535.104.05 ("latest" would otherwise compare as version 0 and fabricate driver-too-old)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():  # a branch ("550"): a minimum cannot be judged against it
        raise InputError(
            f"option {option} = {value!r} names a driver branch, not a version: give the full version, such as "
            "535.104.05",
            fix="give the version `nvidia-smi --query-gpu=driver_version --format=csv,noheader` prints, or leave "
            f"{option} out")
    if not _DRIVER_RE.match(text):
        raise InputError(
            f"option {option} = {value!r} is not a driver version: expected digits and dots, such as 535.104.05",
            fix="give the version `nvidia-smi --query-gpu=driver_version --format=csv,noheader` prints, or leave "
            f"{option} out",
        )
    return text


@dataclass(frozen=True)
class HostSpec:
    """The machine the image is meant for: GPU names or "X.Y" compute capabilities, driver version."""

    gpus: list[str] = field(default_factory=list)
    driver: str | None = None
    # whose driver serves CUDA: "linux"; "wsl2" (the Windows driver inside WSL 2, and WSL's own limits);
    # "windows" (the Windows driver's minimums alone)
    platform: Literal["linux", "windows", "wsl2"] = "linux"

    @property
    def windows_driver(self) -> bool:
        """The Windows column of the CUDA table's driver minimums applies."""
        return self.platform in ("windows", "wsl2")

    def __post_init__(self) -> None:
        object.__setattr__(self, "driver", parse_driver(self.driver))


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str
    message: str  # one line
    fix: str
    source: str  # the knowledge-base row it rests on (cite())
    # the platforms it is about, for a profile of more than one ("linux/arm64"; "linux/amd64, linux/arm64": all of
    # them); "" for a profile of one (left out of the JSON then)
    platform: str = ""

    def to_json(self) -> dict[str, str]:
        out = asdict(self)
        if not self.platform:
            del out["platform"]
        return out
