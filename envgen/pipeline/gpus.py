"""The GPU keywords of a container envgen starts: how many GPUs (--gpus), by which route (the NVIDIA
runtime, or CDI device names), and the image's search paths set again where a CDI spec's env replaces them;
and the engine's refusal of a GPU request (envgen.docker's GpuRequestRefused) as the host error it is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from envgen.docker import RunResult, run_container
from envgen.errors import GpuRequestRefused, InputError
from envgen.vocabulary import LABEL_GPU_REQUIRED

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from envgen.docker.socket_engine import Engine
    from envgen.host.route import GpuRoute


def gpus_for(labels: Mapping[str, str], requested: str | None) -> str:
    """The GPUs asked for, else what the image's profile needs (its label): none for a CPU profile, else all."""
    if requested:
        return requested
    return "none" if labels.get(LABEL_GPU_REQUIRED) == "false" else "all"


def parse_gpus(gpus: str) -> Any:
    if gpus in ("all", "none"):
        return gpus
    if gpus.isdigit() and int(gpus) > 0:
        return int(gpus)
    raise InputError(f"option --gpus = {gpus!r} is not valid", fix="use all, none, or a number of GPUs")


def gpu_kwargs(client: Engine, image: str, gpus: str, route: GpuRoute | None) -> dict[str, Any]:
    """`run_container`'s GPU keywords for ``gpus`` ("all", "N", "none") over ``route`` (None: the NVIDIA
    runtime). By CDI, the search-path variables the image sets and the spec's env replaces (PATH,
    LD_LIBRARY_PATH: seen with a spec that points them at the driver's directory) are set again, the
    image's entries first and the spec's after them, so the image keeps its Python and libraries."""
    kwargs: dict[str, Any] = {"gpus": parse_gpus(gpus)}
    if gpus == "none" or route is None or route.route != "cdi":
        return kwargs
    kwargs["cdi_devices"] = route.devices
    from envgen.docker.images import image_attrs
    from envgen.host.cdi import overridden_env  # the host's modules: for a run with GPUs only

    image_env = ((image_attrs(client, image) or {}).get("Config") or {}).get("Env") or []
    restore = overridden_env(route.specs, image_env)
    if restore:
        kwargs["restore_env"] = restore
    return kwargs


def start_container(client: Engine, image: str, command: str | Sequence[str] | None, *, gpus: str,
                    route: GpuRoute | None, **kwargs: Any) -> RunResult:
    """`run_container` with the GPU keywords for ``gpus`` over ``route``. The engine's refusal of the GPU
    request becomes HostIncompatible, in the doctor's words (envgen.host.engine_errors)."""
    try:
        return run_container(client, image, command, **kwargs, **gpu_kwargs(client, image, gpus, route))
    except GpuRequestRefused as refusal:
        from envgen.host.engine_errors import host_incompatible

        raise host_incompatible(refusal) from None
