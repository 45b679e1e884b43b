"""Pulling through registry mirrors (``mirrors.registries``): the base image before a build, and
envgen's own images in ``envgen pull``. A mirror that does not answer, or lacks the image, is one
line naming the mirror, the image and the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from envgen.docker import inspect_image, probe_image, pull_image
from envgen.errors import RegistryError
from envgen.mirrors import MirroredRef, split_registry

if TYPE_CHECKING:
    from docker import DockerClient


def mirror_failure(mirrored: MirroredRef, exc: RegistryError, what: str) -> RegistryError:
    """``exc`` (from pulling ``mirrored.ref``) reworded around the mirror."""
    setting = f"mirrors.registries.{mirrored.registry}"
    head = f"registry mirror {mirrored.mirror} (set for {mirrored.registry}) cannot serve {what} {mirrored.original}"
    if exc.cause == "unreachable":
        return RegistryError(f"{head}: the mirror does not answer",
                             fix=f"check {setting} in the profile or ~/.config/envgen/config.yaml, and that "
                                 f"{mirrored.mirror} is up", cause="unreachable")
    if exc.cause == "missing":
        return RegistryError(f"{head}: the mirror has no {mirrored.ref}",
                             fix=f"copy the image to the mirror (docker pull, docker tag {mirrored.ref}, docker "
                                 f"push), or remove {setting}", cause="missing")
    if exc.cause == "denied":
        return RegistryError(f"{head}: the mirror refused access to {mirrored.ref}",
                             fix=f"docker login {mirrored.mirror.split('/', 1)[0]}", cause="denied")
    return RegistryError(f"{head}: {exc.message}", fix=exc.fix, cause=exc.cause)


def fetch_base(client: DockerClient, mirrored: MirroredRef, echo: Callable[[str], None]) -> str:
    """Make the mirrored base present in the engine before the build (the builder then uses the
    local copy); returns its image ID."""
    present = inspect_image(client, mirrored.ref)
    if present is not None:
        return present.id
    echo(f"base image: {mirrored.original} through the mirror {mirrored.mirror} ({mirrored.ref})")
    try:
        return pull_image(client, mirrored.ref)
    except RegistryError as exc:
        raise mirror_failure(mirrored, exc, "the base image") from None


# The host the engine dials for each registry name, where it is another one.
_DIALS = {"docker.io": "registry-1.docker.io"}


def unreachable_base(base_ref: str, exc: RegistryError) -> RegistryError:
    """The base's registry does not answer: one line naming the image and the registry, and the ways out."""
    registry = split_registry(base_ref)[0]
    image = base_ref.split("@", 1)[0]
    dials = f" ({_DIALS[registry]})" if registry in _DIALS else ""
    cause = exc.message.rstrip(")").rsplit(": ", 1)[-1]
    return RegistryError(
        f"the base image {image} cannot be fetched: its registry {registry}{dials} cannot be reached from this "
        f"machine ({cause})",
        fix=f"set mirrors.registries to a mirror that answers (mirrors: {{registries: {{{registry}: MIRROR_HOST}}}} "
            "in the profile or ~/.config/envgen/config.yaml), or build elsewhere and bring the image here "
            f"(`envgen save` there, `envgen load FILE` here), or `docker load` a copy of {image} and set "
            "`local_base: true`",
        cause="unreachable")


def ensure_base_reachable(client: DockerClient, base_ref: str) -> None:
    """Before any build step: a base that is not in the engine must be fetchable from its registry. Only an
    unreachable registry or a missing image stops the build here; the builder reports anything else."""
    if inspect_image(client, base_ref) is not None:
        return
    try:
        probe_image(client, base_ref)
    except RegistryError as exc:
        if exc.cause == "unreachable":
            raise unreachable_base(base_ref, exc) from None
        if exc.cause == "missing":
            raise


__all__ = ["ensure_base_reachable", "fetch_base", "mirror_failure", "unreachable_base"]
