"""Rendering: a profile becomes a build context (Dockerfiles, environment files, lock info, the
smoke probe) and exports for other tools (devcontainer, compose, Apptainer, buildx bake).

The names below are loaded on first use (PEP 562), so that importing one light submodule does not import the
template machinery."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envgen.render.core import RenderedContext, RenderResult, image_tag, render, render_in_memory
    from envgen.render.exports import EXPORT_FORMATS, export
    from envgen.render.plan import TemplateInput, render_context

_EXPORTS = {
    "RenderedContext": "core", "RenderResult": "core", "image_tag": "core", "render": "core",
    "render_in_memory": "core", "EXPORT_FORMATS": "exports", "export": "exports", "TemplateInput": "plan",
    "render_context": "plan",
}

__all__ = [
    "EXPORT_FORMATS",
    "TemplateInput",
    "RenderResult",
    "RenderedContext",
    "export",
    "image_tag",
    "render",
    "render_context",
    "render_in_memory",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'envgen.render' has no attribute {name!r}")
    return getattr(import_module(f"envgen.render.{module}"), name)
