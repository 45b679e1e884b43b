"""The unlocked build of cpu-smoke plus pins of TensorFlow's own dependencies (``protobuf==4.21.12``,
``six==1.16.0``, inside the ranges TensorFlow 2.12 declares) and one package no framework needs: the pins go to the
environment layer with the frameworks (one pip resolution), the extras layer holds colorama alone. Before issue #28
the environment was installed without them and the extras layer then failed with pip's ResolutionImpossible.
A cpu-smoke-sized build (TensorFlow and torch CPU wheels; the BuildKit cache keeps them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.pipeline.build import build
from tests.pipeline.conftest import alias
from tests.unit.test_lock_closure import PINS, closure_profile

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow


def test_pins_of_the_frameworks_dependencies_build_unlocked(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str],
        docker_client: DockerClient, tmp_path: Path) -> None:
    body = closure_profile(tmp_path).read_text(encoding="utf-8").replace("name: closure\n", "")
    name = write_profile("pipe-closure", body)
    lines: list[str] = []
    outcome = build(name, echo=lines.append)
    cleanup_tags += [outcome.tag, alias(name)]
    assert any("unlocked build" in line for line in lines)
    assert outcome.smoke is not None and outcome.smoke.passed, outcome.smoke and outcome.smoke.table()
    context = envgen_home / "state" / "contexts" / name
    assert [line for line in (context / "requirements.extra.txt").read_text().splitlines()
            if not line.startswith("#")] == ["colorama==0.4.6"]
    assert all(pin in (context / "requirements.lock").read_text().splitlines() for pin in PINS[:3])
    listed = json.loads(docker_client.containers.run(outcome.tag, ["python", "-m", "pip", "list", "--format=json"],
                                                     remove=True).decode())
    versions = {p["name"].lower(): p["version"] for p in listed}
    assert {name: versions.get(name) for name in ("protobuf", "six", "numpy", "colorama")} == {
        "protobuf": "4.21.12", "six": "1.16.0", "numpy": "1.23.5", "colorama": "0.4.6"}
