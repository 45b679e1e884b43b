"""Docker engine access: lazy SDK client, builder detection, builds, images, registry, containers.

Nothing here knows about profiles, and nothing imports the Docker SDK until a function needs it. The names below
are imported from their modules on first use, so that importing one module of the package (``envgen.docker.builder``
for `envgen render`'s build line) does not import the builds', runs' and registry's code as well.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envgen.docker.build import BuildResult, build_image
    from envgen.docker.builder import BuilderInfo, detect_builder
    from envgen.docker.client import connect
    from envgen.docker.images import ImageSummary, inspect_image, list_images, remove_image, tag_image
    from envgen.docker.progress import LiveSink, NullSink, PlainSink, ProgressSink, StepEvent, sink_for
    from envgen.docker.push_pull import probe_image, pull_image, push_image
    from envgen.docker.run import RunResult, run_container

_HOME = {
    "build": ("BuildResult", "build_image"),
    "builder": ("BuilderInfo", "detect_builder"),
    "client": ("connect",),
    "images": ("ImageSummary", "inspect_image", "list_images", "remove_image", "tag_image"),
    "progress": ("LiveSink", "NullSink", "PlainSink", "ProgressSink", "StepEvent", "sink_for"),
    "push_pull": ("probe_image", "pull_image", "push_image"),
    "run": ("RunResult", "run_container"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = [
    "BuildResult", "BuilderInfo", "ImageSummary", "LiveSink", "NullSink", "PlainSink", "ProgressSink",
    "RunResult", "StepEvent", "build_image", "connect", "detect_builder", "inspect_image", "list_images",
    "probe_image", "pull_image", "push_image", "remove_image", "run_container", "sink_for", "tag_image",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'envgen.docker' has no attribute {name!r}")
    return getattr(import_module(f"envgen.docker.{module}"), name)
