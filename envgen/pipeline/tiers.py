"""Which of the probe's tiers can run on this host: the library tier always, the GPU tier only where
the engine can hand a GPU to the container.

An image validated at the library tier (built on a host without a usable GPU) is proved as far as a
machine without a GPU can prove it; `envgen run` and `envgen pull` on a GPU host run the GPU tier
before first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from envgen.host.doctor import NO_RUNTIME_FIX
from envgen.host.model import HostFacts

# what a passing smoke report proves (the probe's ``tier``): ordered weakest first
LIBRARIES, GPU, CPU = "libraries", "gpu", "cpu"
TIER_LABEL = "io.envgen.smoke-tier"


@dataclass(frozen=True)
class TierPlan:
    tiers: Literal["all", "libraries"]  # the probe's --tier
    gpus: str  # the container's --gpus
    reason: str | None = None  # why the GPU tier does not run here

    def without_gpu(self, reason: str) -> TierPlan:
        return TierPlan("libraries", "none", reason)


def plan_tiers(gpu_required: bool, facts: HostFacts | None, requested_gpus: str | None = None) -> TierPlan:
    """The probe run a profile gets here. ``facts`` None means the host could not be read (then the GPU
    tier is tried, and the engine's answer decides)."""
    if not gpu_required:
        return TierPlan("all", requested_gpus or "none")
    if requested_gpus == "none":
        return TierPlan("libraries", "none", "--gpus none was given: the GPU tier needs a GPU in the container")
    if facts is None:
        return TierPlan("all", requested_gpus or "all")
    if not facts.gpus:
        why = f" ({facts.gpu_error})" if facts.gpu_error else ""
        return TierPlan("libraries", "none", f"no GPU on this host{why}: the GPU tier runs on the first "
                        "`envgen run` or `envgen pull` on a GPU host")
    runtime = facts.nvidia_runtime
    if not facts.docker.reachable or runtime.status == "missing":
        names = ", ".join(gpu.name for gpu in facts.gpus)
        detail = runtime.detail if facts.docker.reachable else f"no Docker engine ({facts.docker.error})"
        return TierPlan("libraries", "none", f"this host has {len(facts.gpus)} GPU(s) ({names}) but the Docker "
                        f"engine cannot hand them to containers: {detail}; to run the GPU tier: {NO_RUNTIME_FIX}")
    return TierPlan("all", requested_gpus or "all")


def host_plan(gpu_required: bool, env: Mapping[str, str] | None = None, requested_gpus: str | None = None,
              kb: Any = None) -> TierPlan:
    """plan_tiers with this host's real facts (nvidia-smi/NVML, docker info)."""
    if not gpu_required or requested_gpus == "none":
        return plan_tiers(gpu_required, None, requested_gpus)
    from envgen.host import RealProvider, collect

    try:
        facts = collect(RealProvider(env), kb)
    except Exception:  # noqa: BLE001 - unreadable host facts: let the engine's answer decide
        facts = None
    return plan_tiers(gpu_required, facts, requested_gpus)


def tier_of(record: Any, labels: Mapping[str, str]) -> str | None:
    """The tier an image was validated at: this host's record, else the sealed label."""
    if record is not None:
        return (getattr(record, "tier", "") or None) if record.passed else None
    if labels.get("io.envgen.smoke") == "pass":
        return labels.get(TIER_LABEL) or None
    return None
