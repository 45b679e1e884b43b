"""`envgen smoke IMAGE` for an image envgen did not build: a hand-written Dockerfile (tests/docker/foreign: Debian's
python3, a venv with numpy and rich), built by the real engine, probed with the venv's own Python through a container
that is never committed; the verdict is recorded against the image ID as inspected, and the image keeps its ID and
gets no label or tag. An image without any Python is refused with the reason."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from typer.testing import CliRunner

from envgen.cli import app

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import BuilderInfo

FOREIGN = Path(__file__).resolve().parent / "foreign"


def _state_dir() -> Path:
    from envgen.config import load_config

    return load_config(os.environ).state_dir


def test_a_hand_written_image_is_probed_with_its_own_python_and_recorded_as_inspected(
        docker_client: DockerClient, buildkit_builder: BuilderInfo, base_image: str, tmp_path: Path,
        new_tag: Callable[[str], str]) -> None:
    from envgen.config import default_ca_bundle
    from envgen.docker import build_image, inspect_image

    ref = new_tag("foreign")
    bundle = default_ca_bundle(os.environ)
    build_image(FOREIGN, builder=buildkit_builder, tags=[ref], log_path=tmp_path / "build.log",
                secrets={"ca_bundle": str(bundle)} if bundle else {})
    before = inspect_image(docker_client, ref)
    assert before is not None
    tags = set(docker_client.images.get(before.id).tags)
    result = CliRunner().invoke(app, ["smoke", ref, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{"):])
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["python"]["status"] == "pass" and "3.11" in checks["python"]["message"]
    record = json.loads((_state_dir() / "validations" / (before.id.replace("sha256:", "") + ".json")).read_text())
    assert record["origin"] == "inspected" and record["status"] == "pass" and record["profile"] == ""
    after = inspect_image(docker_client, ref)
    assert after is not None and after.id == before.id and after.labels == before.labels  # not sealed
    assert set(docker_client.images.get(before.id).tags) == tags  # not tagged
    named = CliRunner().invoke(app, ["smoke", ref, "--python", "/opt/venv/bin/python", "--tier", "libraries"])
    assert named.exit_code == 0 and "smoke PASS" in named.output, named.output


def test_an_image_without_python_is_refused_with_the_reason(base_image: str) -> None:
    result = CliRunner().invoke(app, ["smoke", base_image])
    assert result.exit_code != 0
    assert "no Python interpreter in the image" in result.output and "--python" in result.output


def test_check_image_judges_the_stack_an_image_holds(docker_client: DockerClient, buildkit_builder: BuilderInfo,
                                                     base_image: str, tmp_path: Path,
                                                     new_tag: Callable[[str], str]) -> None:
    from envgen.config import default_ca_bundle
    from envgen.docker import build_image

    ref = new_tag("foreign")
    bundle = default_ca_bundle(os.environ)
    build_image(FOREIGN, builder=buildkit_builder, tags=[ref], log_path=tmp_path / "build.log",
                secrets={"ca_bundle": str(bundle)} if bundle else {})
    result = CliRunner().invoke(app, ["check", "--image", ref, "--driver", "550.54.14"])
    assert result.exit_code == 0, result.output
    assert "judging the stack read from image" in result.output and "0 error(s)" in result.output
    assert "base debian:bookworm-slim" in result.output and "Python 3.11" in result.output
    missing = CliRunner().invoke(app, ["check", "--image", "envgen-no-such/image:1"])
    assert missing.exit_code == 2 and "no such image on this engine" in missing.output
