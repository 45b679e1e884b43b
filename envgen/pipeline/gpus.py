"""The GPU keywords of a container envgen starts: how many GPUs (--gpus), by which route (the NVIDIA
runtime, or CDI device names), and the image's search paths set again where a CDI spec's env replaces them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from envgen.errors import InputError
from envgen.host.cdi import overridden_env

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.host.route import GpuRoute


def parse_gpus(gpus: str) -> Any:
    if gpus in ("all", "none"):
        return gpus
    if gpus.isdigit() and int(gpus) > 0:
        return int(gpus)
    raise InputError(f"option --gpus = {gpus!r} is not valid", fix="use all, none, or a number of GPUs")


def gpu_kwargs(client: DockerClient, image: str, gpus: str, route: GpuRoute | None) -> dict[str, Any]:
    """`run_container`'s GPU keywords for ``gpus`` ("all", "N", "none") over ``route`` (None: the NVIDIA
    runtime). By CDI, the search-path variables the image sets and the spec's env replaces (PATH,
    LD_LIBRARY_PATH: seen with a spec that points them at the driver's directory) are set again, the
    image's entries first and the spec's after them, so the image keeps its Python and libraries."""
    kwargs: dict[str, Any] = {"gpus": parse_gpus(gpus)}
    if gpus == "none" or route is None or route.route != "cdi":
        return kwargs
    kwargs["cdi_devices"] = route.devices
    image_env = (client.images.get(image).attrs.get("Config") or {}).get("Env") or []
    restore = overridden_env(route.specs, image_env)
    if restore:
        kwargs["restore_env"] = restore
    return kwargs
