"""Which of the probe's tiers can run on this host: the library tier always, the GPU tier only where
the engine can hand a GPU to the container.

An image validated at the library tier (built on a host without a usable GPU) is proved as far as a
machine without a GPU can prove it; `envgen run` and `envgen pull` on a GPU host run the GPU tier
before first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from envgen.errors import HostIncompatible
from envgen.host.model import HostFacts
from envgen.host.route import GpuRoute, choose_route
from envgen.vocabulary import LABEL_SMOKE_TIER, TIER_CPU, TIER_GPU, TIER_LIBRARIES

# what a passing smoke report proves (the probe's ``tier``): ordered weakest first
LIBRARIES, GPU, CPU = TIER_LIBRARIES, TIER_GPU, TIER_CPU
TIER_LABEL = LABEL_SMOKE_TIER


@dataclass(frozen=True)
class TierChoice:
    tiers: Literal["all", "libraries"]  # the probe's --tier
    gpus: str  # the container's --gpus
    reason: str | None = None  # why the GPU tier does not run here
    route: GpuRoute | None = None  # the CDI route when the GPUs go by CDI; None: through the NVIDIA runtime

    def without_gpu(self, reason: str) -> TierChoice:
        return TierChoice("libraries", "none", reason)


def plan_tiers(gpu_required: bool, facts: HostFacts | None, requested_gpus: str | None = None,
               gpu_route: str = "auto") -> TierChoice:
    """The probe run a profile gets here. ``facts`` None means the host could not be read (then the GPU
    tier is tried through the NVIDIA runtime, and the engine's answer decides)."""
    if not gpu_required:
        return _with_route(TierChoice("all", requested_gpus or "none"), facts, gpu_route)
    if requested_gpus == "none":
        return TierChoice("libraries", "none", "--gpus none was given: the GPU tier needs a GPU in the container")
    if facts is None:
        return TierChoice("all", requested_gpus or "all")
    if not facts.gpus:
        why = f" ({facts.gpu_error})" if facts.gpu_error else ""
        return TierChoice("libraries", "none", f"no GPU on this host{why}: the GPU tier runs on the first "
                        "`envgen run` or `envgen pull` on a GPU host")
    access = facts.gpu_access
    if not facts.docker.reachable or access.route is None and gpu_route == "auto":
        names = ", ".join(gpu.name for gpu in facts.gpus)
        detail = access.detail if facts.docker.reachable else f"no Docker engine ({facts.docker.error})"
        fixes = "; ".join(access.fixes) or "see `envgen doctor`"
        return TierChoice("libraries", "none", f"this host has {len(facts.gpus)} GPU(s) ({names}) but the Docker "
                        f"engine cannot hand them to containers: {detail}; to run the GPU tier: {fixes}")
    plan = TierChoice("all", requested_gpus or "all")
    try:
        return _with_route(plan, facts, gpu_route)
    except HostIncompatible as exc:
        return plan.without_gpu(f"the GPU cannot be handed to the container: {exc.one_line()}")


def _with_route(plan: TierChoice, facts: HostFacts | None, gpu_route: str) -> TierChoice:
    """The plan with its GPU request's route: CDI and its device names, or None for the NVIDIA runtime."""
    route = route_for(plan.gpus, facts, gpu_route)
    return replace(plan, route=route if route is not None and route.route == "cdi" else None)


def route_for(gpus: str, facts: HostFacts | None, gpu_route: str = "auto") -> GpuRoute | None:
    """The route a container asking for ``gpus`` takes here; None when no GPU is asked for or the host
    could not be read (then the NVIDIA runtime is asked, and the engine's answer decides). Raises
    HostIncompatible when the route chosen cannot serve the request."""
    if gpus == "none" or facts is None or not facts.docker.reachable:
        return None
    return choose_route(facts.gpu_access, facts.cdi, int(gpus) if gpus.isdigit() else gpus, gpu_route)


def host_plan(gpu_required: bool, env: Mapping[str, str] | None = None, requested_gpus: str | None = None,
              kb: Any = None) -> TierChoice:
    """plan_tiers with this host's real facts (nvidia-smi/NVML, docker info, CDI specs) and the user's
    GPU route (config `gpu_route`, $ENVGEN_GPU_ROUTE)."""
    if requested_gpus == "none" or not gpu_required and not requested_gpus:
        return plan_tiers(gpu_required, None, requested_gpus)
    from envgen.config import load_config

    return plan_tiers(gpu_required, host_facts(env, kb), requested_gpus, load_config(env).gpu_route)


def host_facts(env: Mapping[str, str] | None = None, kb: Any = None) -> HostFacts | None:
    """This host's facts (nvidia-smi/NVML, docker info, CDI specs); None when they cannot be read."""
    from envgen.host import RealProvider, collect

    try:
        return collect(RealProvider(env), kb)
    except Exception:  # noqa: BLE001 - unreadable host facts: let the engine's answer decide
        return None
