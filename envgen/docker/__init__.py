"""Docker engine access: lazy SDK client, builder detection, builds, images, registry, containers.

Nothing here knows about profiles, and nothing imports the Docker SDK until a function needs it.
"""

from envgen.docker.build import BuildResult, build_image
from envgen.docker.builder import BuilderInfo, detect_builder
from envgen.docker.client import connect
from envgen.docker.images import ImageSummary, inspect_image, list_images, remove_image, tag_image
from envgen.docker.progress import LiveSink, NullSink, PlainSink, ProgressSink, StepEvent, sink_for
from envgen.docker.push_pull import probe_image, pull_image, push_image
from envgen.docker.run import RunResult, run_container

__all__ = [
    "BuildResult", "BuilderInfo", "ImageSummary", "LiveSink", "NullSink", "PlainSink", "ProgressSink",
    "RunResult", "StepEvent", "build_image", "connect", "detect_builder", "inspect_image", "list_images",
    "probe_image", "pull_image", "push_image", "remove_image", "run_container", "sink_for", "tag_image",
]
