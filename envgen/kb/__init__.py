"""The compatibility knowledge base: data files under ``data/``, strict row models, pure queries."""

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.loader import load_kb
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
