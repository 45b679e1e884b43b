"""Image names: every image envgen makes is ``<namespace>/<profile>:<hash>`` (plus the ``:latest``
alias), where the namespace comes from the user config's ``namespace`` or ``$ENVGEN_NAMESPACE``
(default ``envgen``). Rendered files and labels do not depend on it: the content hash, the
`org.opencontainers.image.title` label and render.json keep the default name, so one profile has one
hash whatever namespace it is built under."""

from __future__ import annotations

from envgen.config import UserConfig
from envgen.docker.images import split_ref
from envgen.render.hashing import image_tag  # not render.core: a run's tag lookup renders nothing


def image_ref(config: UserConfig, profile_name: str, content_hash: str) -> str:
    return image_tag(profile_name, content_hash, config.namespace)


def alias_ref(config: UserConfig, profile_name: str) -> str:
    return f"{config.namespace}/{profile_name}:latest"


def in_namespace(config: UserConfig, ref: str) -> bool:
    """Whether a local tag (``repo:tag``) lies directly in the namespace (``<namespace>/<profile>:…``)."""
    head, _, name = split_ref(ref)[0].rpartition("/")
    return head == config.namespace and bool(name)
