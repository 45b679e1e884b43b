"""GPU name normalisation: "NVIDIA GeForce GTX 950M", "GeForce GTX 950M" and "GTX 950M" are one GPU;
"Tesla V100-SXM2-16GB" and "V100" too. Model numbers and suffixes (M, Ti, Laptop) are kept."""

from __future__ import annotations

import re

_DROP = {
    "nvidia",
    "geforce",
    "tesla",
    "quadro",
    "gpu",
    "pcie",
    "sxm",
    "sxm2",
    "sxm4",
    "sxm5",
    "nvl",
    "hbm2",
    "hbm2e",
    "hbm3",
    "hbm3e",
    "generation",
    "with",
    "max",
    "q",
    "design",
}
_RENAME = {"mobile": "laptop", "notebook": "laptop"}
# GeForce/RTX series words that a bare model number leaves out: "4090" is the RTX 4090, "1080" the GTX 1080
_SERIES = {"gtx", "rtx", "gt"}
_MEMORY = re.compile(r"^\d+(gb|g)$")


def normalise(name: str) -> str:
    tokens = re.split(r"[\s_/-]+", name.lower().strip())
    kept = [_RENAME.get(t, t) for t in tokens if t and t not in _DROP and not _MEMORY.match(t)]
    return " ".join(kept)


def model_number(normalised: str) -> str:
    """A normalised name without its series word ("rtx 4090" -> "4090"), for queries that give only the number."""
    first, _, rest = normalised.partition(" ")
    return rest if first in _SERIES and rest else normalised
