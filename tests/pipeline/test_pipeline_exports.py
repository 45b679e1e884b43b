"""Exports against the real engine and registry: `devcontainer build` (Dev Containers CLI) on the
devcontainer export of a freshly built CPU image, and a k8s Job that names the image by the digest
the local registry gave it. Cost: one small build (seconds when cached), one push, one
devcontainer build (~10 s)."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from envgen.docker import inspect_image, remove_image
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.prepare import export_profiles
from envgen.pipeline.publish import push
from tests.pipeline.conftest import alias, minimal_profile, publish_registry, pushed_ref

if TYPE_CHECKING:
    from docker import DockerClient


@pytest.fixture(scope="module")
def built(envgen_home: Path, write_profile: Callable[[str, str], str],
          docker_client: DockerClient) -> Iterator[BuildOutcome]:
    name = write_profile(f"export-{secrets.token_hex(3)}", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    yield outcome
    for ref in (outcome.tag, alias(name)):
        remove_image(docker_client, ref, force=True)


def test_devcontainer_build_on_the_local_engine(built: BuildOutcome, tmp_path: Path,
                                                docker_client: DockerClient) -> None:
    tool = shutil.which("devcontainer")
    if tool is None:
        pytest.fail("devcontainer is not installed (npm install -g @devcontainers/cli; scripts/host-setup)")
    export_profiles([built.profile], "devcontainer", tmp_path)
    image_name = f"envgen-dctest-{secrets.token_hex(4)}:1"
    try:
        proc = subprocess.run([tool, "build", "--workspace-folder", str(tmp_path), "--image-name", image_name],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        image = inspect_image(docker_client, image_name)
        assert image is not None and image.labels.get("io.envgen.profile") == built.profile
    finally:
        remove_image(docker_client, image_name, force=True)


def test_k8s_job_names_the_pushed_image_by_digest(built: BuildOutcome, envgen_home: Path, tmp_path: Path,
                                                  local_registry: str, docker_client: DockerClient) -> None:
    registry = publish_registry(local_registry)
    config = envgen_home / "config.yaml"
    original = config.read_text(encoding="utf-8")
    pushed = push(built.profile, registry=registry)
    remote_tag, digest = pushed_ref(pushed)
    try:
        config.write_text(original + f"registry: {registry}\n", encoding="utf-8")
        [path] = export_profiles([built.profile], "k8s", tmp_path)
    finally:
        config.write_text(original, encoding="utf-8")
        remove_image(docker_client, remote_tag)
    job = yaml.safe_load(path.read_text())
    image = job["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"{registry}/{built.profile}@{digest}"
