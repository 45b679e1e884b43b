"""Rendering: a profile becomes a build context (Dockerfiles, environment files, lock info, the
smoke probe) and exports for other tools (devcontainer, compose, Apptainer, buildx bake)."""

from envgen.render.core import RenderedContext, RenderResult, image_tag, render, render_in_memory
from envgen.render.exports import EXPORT_FORMATS, export
from envgen.render.plan import RenderPlan, render_context
from envgen.render.stack import StackPins

__all__ = [
    "EXPORT_FORMATS",
    "RenderPlan",
    "RenderResult",
    "RenderedContext",
    "StackPins",
    "export",
    "image_tag",
    "render",
    "render_context",
    "render_in_memory",
]
