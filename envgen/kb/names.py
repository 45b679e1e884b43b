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
_MEMORY = re.compile(r"^\d+(gb|g)$")


def normalise(name: str) -> str:
    tokens = re.split(r"[\s_/-]+", name.lower().strip())
    kept = [_RENAME.get(t, t) for t in tokens if t and t not in _DROP and not _MEMORY.match(t)]
    return " ".join(kept)
