"""What `envgen suggest` is asked: a GPU, the frameworks (with optional version prefixes), a driver, a Python
and a preference, and ``--frameworks`` parsed into it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envgen.errors import InputError
from envgen.kb.engines import ENGINES

Prefer = Literal["newest", "lts"]
FRAMEWORKS = ("tensorflow", "pytorch")


@dataclass(frozen=True)
class Request:
    gpu: str  # a GPU name or "X.Y"
    frameworks: dict[str, str | None]  # framework -> version prefix asked for (None: any)
    driver: str | None = None
    python: str | None = None
    prefer: Prefer = "newest"
    pip: tuple[str, ...] = ()  # packages.pip lines the profile gets besides the frameworks' (a serving engine's pin)



def parse_frameworks(text: str) -> dict[str, str | None]:
    """``"tensorflow,pytorch"`` or ``"tensorflow==2.18,torch==2.3"`` -> {framework: version prefix or None}."""
    out: dict[str, str | None] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, version = item.replace("==", "=").partition("=")
        name = {"tf": "tensorflow", "torch": "pytorch"}.get(name.strip().lower(), name.strip().lower())
        if name not in FRAMEWORKS and name not in ENGINES:
            raise InputError(
                f"option --frameworks: {item!r} is not a framework envgen knows",
                fix="use tensorflow and/or pytorch, or a serving engine (vllm, sglang), optionally with a version: "
                    "tensorflow==2.15,pytorch",
            )
        if version and not all(p.isdigit() for p in version.split(".")):
            raise InputError(f"option --frameworks: version {version!r} of {name} is not digits and dots",
                             fix=f"write {name}==2.1 or leave the version out")
        out[name] = version or None
    if not out:
        raise InputError("option --frameworks is empty", fix="give tensorflow, pytorch or tensorflow,pytorch")
    return out
