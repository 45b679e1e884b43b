"""How a GPU reaches a container on this host: the NVIDIA runtime (`--gpus`, a device request with the
`gpu` capability, served by the NVIDIA Container Toolkit's hook) or CDI (`--device nvidia.com/gpu=all`,
a device request of the `cdi` driver, served by the engine from its CDI specs).

`gpu_access` judges both routes from the host facts (what `envgen doctor` prints); `choose_route` picks
the one a container takes (``auto``, or the one the user forces with `gpu_route` / `--gpu-route`) and,
for CDI, the fully qualified device names to ask for: ``nvidia.com/gpu=all``, or ``=0``, ``=1``, ... for
``--gpus N``. Only facts are read here: the request itself is made by `envgen.docker.run`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envgen.errors import HostIncompatible
from envgen.host.cdi import NVIDIA_GPU_KIND, CdiSpec, gpu_devices
from envgen.host.engine_errors import CDI_ENABLE_FIX, CDI_GENERATE_FIX, NO_RUNTIME_FIX
from envgen.host.model import CdiFacts, DockerFacts, GpuAccess, RuntimeFacts

Route = Literal["runtime", "cdi"]
ROUTE_CHOICES = ("auto", "runtime", "cdi")

CDI_SOURCE = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html"


@dataclass(frozen=True)
class GpuRoute:
    """The route one container takes; ``devices`` are the CDI names to request (empty for the runtime)."""

    route: Route
    devices: tuple[str, ...] = ()
    why: str = ""
    specs: tuple[CdiSpec, ...] = ()  # the CDI specs the devices come from (their env reaches the container)


def gpu_access(docker: DockerFacts, runtime: RuntimeFacts, cdi: CdiFacts) -> GpuAccess:
    """Both routes judged, and the one ``auto`` takes: the NVIDIA runtime where the engine has it
    (registered, or its hook on PATH), else CDI where the engine reads specs that name GPUs."""
    if not docker.reachable:
        return GpuAccess(None, "the Docker engine could not be asked", False, False)
    runtime_ok = runtime.status in ("registered", "hook")
    cdi_ok, cdi_why = _cdi_usable(cdi)
    fixes: list[str] = []
    if runtime_ok:
        detail = runtime.detail
        route: Route | None = "runtime"
    elif cdi_ok:
        detail = cdi_why
        route = "cdi"
    else:
        route = None
        detail = f"none: no NVIDIA runtime ({runtime.detail}); no CDI ({cdi_why})"
        fixes = [NO_RUNTIME_FIX, *_cdi_fixes(cdi)]
    return GpuAccess(route, detail, runtime_ok, cdi_ok, tuple(fixes))


def _cdi_usable(cdi: CdiFacts) -> tuple[bool, str]:
    gpu_specs = [spec for spec in cdi.specs if spec.is_nvidia_gpu]
    names = gpu_devices(gpu_specs)
    if not cdi.enabled:
        seen = f"; {len(gpu_specs)} {NVIDIA_GPU_KIND} spec(s) found but unused" if gpu_specs else ""
        return False, "the engine lists no CDI spec directories (CDI off, or an engine older than 25)" + seen
    if not gpu_specs:
        return False, f"no spec in {', '.join(cdi.spec_dirs)} declares {NVIDIA_GPU_KIND} devices"
    if not names:
        return False, f"CDI spec {gpu_specs[0].path} declares no {NVIDIA_GPU_KIND} device"
    where = ", ".join(sorted({spec.path for spec in gpu_specs}))
    return True, f"{NVIDIA_GPU_KIND}={','.join(names)} from {where}"


def _cdi_fixes(cdi: CdiFacts) -> list[str]:
    return [CDI_GENERATE_FIX] if cdi.enabled else [CDI_GENERATE_FIX, CDI_ENABLE_FIX]


def choose_route(access: GpuAccess, cdi: CdiFacts, gpus: str | int, prefer: str = "auto") -> GpuRoute:
    """The route for a container asking for ``gpus`` ("all" or a count). Raises HostIncompatible with one
    line naming what is missing (the spec file, the device) and the fix."""
    if prefer not in ROUTE_CHOICES:
        raise HostIncompatible(f"gpu_route {prefer!r} is not a route", fix="use auto, runtime or cdi")
    if prefer == "runtime" or (prefer == "auto" and access.route == "runtime"):
        if not access.runtime_ok and prefer == "runtime":
            raise HostIncompatible("gpu_route runtime: the engine has no NVIDIA runtime", fix=NO_RUNTIME_FIX)
        return GpuRoute("runtime", why=access.detail)
    if prefer == "cdi" and not access.cdi_ok:
        why = _cdi_usable(cdi)[1]
        raise HostIncompatible(f"gpu_route cdi: {why}", fix="; ".join(_cdi_fixes(cdi)))
    if access.route is None:
        raise HostIncompatible(f"the Docker engine cannot hand GPUs to containers: {access.detail}",
                               fix="; ".join(access.fixes) or None)
    devices = cdi_devices(cdi, gpus)
    used = tuple(spec for spec in cdi.specs if spec.is_nvidia_gpu and any(spec.qualified(n) in devices
                                                                          for n in spec.devices))
    return GpuRoute("cdi", devices, access.detail, used)


def cdi_devices(cdi: CdiFacts, gpus: str | int) -> tuple[str, ...]:
    """``nvidia.com/gpu=all`` for all GPUs, ``=0`` … ``=N-1`` for N, each checked against the specs."""
    specs = [spec for spec in cdi.specs if spec.is_nvidia_gpu]
    wanted = ["all"] if gpus == "all" else [str(i) for i in range(int(gpus))]
    by_name = {name: spec for spec in reversed(specs) for name in spec.devices}
    missing = [name for name in wanted if name not in by_name]
    if missing:
        where = ", ".join(sorted({spec.path for spec in specs})) or "the CDI specs"
        have = ", ".join(gpu_devices(specs)) or "none"
        raise HostIncompatible(
            f"--gpus {gpus}: CDI spec {where} declares no {NVIDIA_GPU_KIND}={missing[0]} (it declares: {have})",
            fix=f"ask for fewer GPUs, or {CDI_GENERATE_FIX} (it names every GPU by index and 'all')")
    return tuple(by_name[name].qualified(name) for name in wanted)


def spec_summary(spec: CdiSpec) -> str:
    """One line of the doctor's CDI section."""
    if spec.error:
        return f"{spec.path}: {spec.error}"
    names = ", ".join(spec.devices) or "no devices"
    return f"{spec.path}: {spec.kind} ({names})"
