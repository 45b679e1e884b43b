"""`envgen run PROFILE` with GPUs plans the profile once: the tag's render (where the store keeps no content hash
for it) and the host gate read the same plan; once the hash is kept, the gate's is the only plan. The image is the
local base tagged as the profile's image on the real engine; the host facts are recorded ones (an A100 with driver
525, tests/fixtures/hosts/a100-525: no GPU here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import envgen.pipeline.tiers as tiers
from envgen.host import RecordedProvider, collect
from envgen.pipeline.resolve import profile_tag, resolve_image
from envgen.pipeline.run import _gate_and_route
from envgen.pipeline.session import Session
from envgen.profile import load_profile
from envgen.vocabulary import LABEL_GPU_REQUIRED, LABEL_PROFILE
from tests.counting import count_plans

if TYPE_CHECKING:
    from docker import DockerClient

HOST = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "a100-525"


def _run_path(client: DockerClient, env: dict[str, str]) -> None:
    """What `envgen run modern-a100` does before the container: the image by its tag, then the host gate."""
    session = Session(env)
    image = resolve_image(client, "modern-a100", session=session)
    assert image.id
    # the recorded A100 runs it (with a warning: tests/unit/test_gate.py); the runtime's route, not CDI: None
    assert _gate_and_route({LABEL_PROFILE: "modern-a100", LABEL_GPU_REQUIRED: "true"}, "all", "auto", session) is None


def test_a_gpu_run_plans_once(docker_client: DockerClient, base_image: str, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    monkeypatch.setattr(tiers, "host_facts", lambda env=None, kb=None: collect(RecordedProvider(HOST), kb))
    profile = load_profile("modern-a100", env)
    tag, _ = profile_tag(profile, session=Session({**env, "ENVGEN_NO_CACHE": "1"}))
    repository, _, version = tag.rpartition(":")
    docker_client.images.get(base_image).tag(repository, version)
    try:
        counts = count_plans(monkeypatch)
        _run_path(docker_client, env)  # nothing kept: the tag's render plans, the gate reads its plan
        assert counts.plans == 1 and counts.renders == 1
        counts = count_plans(monkeypatch)
        _run_path(docker_client, env)  # the hash kept: the gate plans, nothing is rendered
        assert counts.plans == 1 and counts.renders == 0
    finally:
        docker_client.images.remove(tag, noprune=True)
