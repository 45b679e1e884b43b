"""Which probe tiers a host can run, from the host facts of tests/fixtures/hosts/ (h200-580 and nogpu-dev recorded
on those machines; a100-525 pasted by users, with a `docker info` borrowed from a toolkit test VM: its source.txt)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from envgen.host import RecordedProvider, collect
from envgen.host.model import HostFacts, RuntimeFacts
from envgen.host.route import gpu_access
from envgen.kb import load_kb
from envgen.pipeline.state import Validation
from envgen.pipeline.tiers import TierChoice, plan_tiers

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


@pytest.fixture(scope="module")
def facts() -> dict[str, HostFacts]:
    kb = load_kb()
    return {name: collect(RecordedProvider(HOSTS / name), kb) for name in ("a100-525", "nogpu-dev", "h200-580")}


def test_gpu_host_with_a_runtime_runs_both_tiers(facts: dict[str, HostFacts]) -> None:
    assert plan_tiers(True, facts["a100-525"]) == TierChoice("all", "all", None)
    assert plan_tiers(True, facts["a100-525"], "1") == TierChoice("all", "1", None)


def test_host_without_gpu_runs_the_library_tier_and_says_why(facts: dict[str, HostFacts]) -> None:
    plan = plan_tiers(True, facts["nogpu-dev"])
    assert plan.tiers == "libraries" and plan.gpus == "none"
    assert plan.reason is not None and plan.reason.startswith("no GPU on this host")
    assert "envgen run" in plan.reason


def test_gpu_host_whose_engine_cannot_hand_out_gpus_says_so(facts: dict[str, HostFacts]) -> None:
    missing = RuntimeFacts("missing", "no nvidia runtime, CDI spec or nvidia-container-runtime-hook")
    a100 = replace(facts["a100-525"], nvidia_runtime=missing,
                   gpu_access=gpu_access(facts["a100-525"].docker, missing, facts["a100-525"].cdi))
    plan = plan_tiers(True, a100)
    assert plan.tiers == "libraries" and plan.reason is not None
    assert "this host has 2 GPU(s)" in plan.reason and "cannot hand them to containers" in plan.reason
    assert "nvidia-container-toolkit" in plan.reason.lower() or "nvidia-ctk" in plan.reason
    h200 = plan_tiers(True, facts["h200-580"])  # GPUs, but no Docker engine at all
    assert h200.tiers == "libraries" and h200.reason and "no Docker engine" in h200.reason


def test_cpu_profiles_and_explicit_no_gpu(facts: dict[str, HostFacts]) -> None:
    assert plan_tiers(False, facts["a100-525"]) == TierChoice("all", "none", None)
    plan = plan_tiers(True, facts["a100-525"], "none")
    assert plan.tiers == "libraries" and plan.reason and "--gpus none" in plan.reason
    # unreadable host facts: the GPU tier is tried and the engine's answer decides
    assert plan_tiers(True, None) == TierChoice("all", "all", None)


def _record(status: str, tier: str) -> Validation:
    return Validation("sha256:x", status, "libraries", "p", "h", "2026-01-01T00:00:00Z", {}, tier)


