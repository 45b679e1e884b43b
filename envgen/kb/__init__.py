"""The compatibility knowledge base: data files under ``data/``, strict row models, pure queries.

``load_kb`` (which reads YAML) is served from ``envgen.kb.loader`` on first use: a check served from the KB cache
never imports the YAML parser."""

from typing import Any

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.models import (
    BaseImageInfo,
    CudaToolkit,
    CudnnRelease,
    GpuModel,
    NgcRelease,
    TensorflowBuild,
    TorchRelease,
    TorchVariant,
)

__all__ = [
    "BaseImageInfo",
    "CudaToolkit",
    "CudnnRelease",
    "GpuModel",
    "KnowledgeBase",
    "NgcRelease",
    "TensorflowBuild",
    "TorchRelease",
    "TorchVariant",
    "load_kb",
]


def __getattr__(name: str) -> Any:
    if name == "load_kb":
        from envgen.kb.loader import load_kb

        return load_kb
    raise AttributeError(f"module 'envgen.kb' has no attribute {name!r}")
