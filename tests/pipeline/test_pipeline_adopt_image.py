"""`envgen init --from IMAGE` on an image envgen did not build (tests/docker/foreign: a hand-written Dockerfile,
Debian's python3 and a venv with numpy and rich): the adopted profile names the image's base (read from its layers),
its Python and every installed distribution at its version; it passes check, and `envgen build` of it makes an image
holding the original's packages at the same versions (read in both by the same reader)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from typer.testing import CliRunner

from envgen.cli import app
from tests.conftest import session_namespace
from tests.pipeline.conftest import alias

if TYPE_CHECKING:
    from docker import DockerClient

FOREIGN = Path(__file__).resolve().parents[1] / "docker" / "foreign"
pytestmark = pytest.mark.slow


def _packages(client: DockerClient, image: str) -> dict[str, str]:
    from envgen.suggest.adopt.image import image_facts

    facts = image_facts(client, image)
    return {d["name"].lower(): d["version"] for d in facts["distributions"]}


def test_an_adopted_image_rebuilds_with_the_same_packages(
        docker_client: DockerClient, envgen_home: Path, write_profile: Callable[[str, str], str],
        cleanup_tags: list[str], tmp_path: Path) -> None:
    from envgen.config import default_ca_bundle
    from envgen.docker import build_image, detect_builder
    from envgen.pipeline.build import build

    original = f"{session_namespace()}/hand-written:venv"
    cleanup_tags.append(original)
    bundle = default_ca_bundle(os.environ)
    build_image(FOREIGN, builder=detect_builder(choice="buildkit"), tags=[original], log_path=tmp_path / "b.log",
                secrets={"ca_bundle": str(bundle)} if bundle else {})
    out = envgen_home / "profiles" / "adopted-venv.yaml"
    result = CliRunner().invoke(app, ["init", "--from", original, "-o", str(out)])
    assert result.exit_code == 0 and "0 error(s)" in result.output, result.output
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["base"] == "debian:bookworm-slim" and data["local_base"] is True and data["python"] == "3.11"
    assert "numpy==1.26.4" in data["packages"]["pip"] and "rich==13.7.1" in data["packages"]["pip"]
    outcome = build("adopted-venv")
    cleanup_tags += [outcome.tag, alias("adopted-venv")]
    assert outcome.smoke is not None and outcome.smoke.passed
    before, after = _packages(docker_client, original), _packages(docker_client, outcome.image_id)
    assert before and {name: after.get(name) for name in before} == before
