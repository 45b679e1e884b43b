"""The compatibility knowledge base: data files under ``data/``, strict row models, pure queries.

Every name is served from its module on first use: ``load_kb`` (which reads YAML) from ``envgen.kb.loader``, so a
check served from the KB cache never imports the YAML parser; the rest from ``knowledge`` and ``models``."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    """Each name from its module on first use: importing one row module (``envgen.kb.specifiers``, which profile
    loading reads) does not import the whole KB (`envgen run` of a profile the caches serve loads none)."""
    if name == "load_kb":
        from envgen.kb.loader import load_kb

        return load_kb
    if name == "KnowledgeBase":
        from envgen.kb.knowledge import KnowledgeBase

        return KnowledgeBase
    if name in __all__:
        from envgen.kb import models

        return getattr(models, name)
    raise AttributeError(f"module 'envgen.kb' has no attribute {name!r}")
