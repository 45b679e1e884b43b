"""End to end with real frameworks: build `cpu-smoke` (TensorFlow 2.12 CPU + PyTorch CPU on Debian 12),
the smoke test passes inside it, testinfra inspects a running container, the image goes through the
local registry and back, and `envgen run` runs a command in it.

Cold, this downloads TensorFlow and its dependencies (~600 MB) once; the BuildKit cache keeps them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.publish import pull, push, remote_ref
from envgen.pipeline.run import run
from tests.pipeline.conftest import alias, publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcome(envgen_home: Path) -> Iterator[BuildOutcome]:
    yield build("cpu-smoke")


@pytest.fixture(scope="module")
def host(outcome: BuildOutcome, docker_client: DockerClient) -> Iterator[Any]:
    import testinfra

    container = docker_client.containers.run(outcome.tag, ["sleep", "infinity"], detach=True, remove=True)
    try:
        yield testinfra.get_host(f"docker://{container.id}")
    finally:
        container.kill()


def test_smoke_passed_with_every_framework_check(outcome: BuildOutcome) -> None:
    assert outcome.smoke is not None and outcome.smoke.passed, outcome.smoke and outcome.smoke.table()
    assert outcome.smoke.mode == "cpu-only"
    names = {check.name for check in outcome.smoke.checks if check.status == "pass"}
    assert any(n.startswith("torch.") for n in names) and any(n.startswith("tensorflow.") for n in names)
    assert {"torch.train", "tensorflow.train"} & names


def test_versions_and_path_for_non_login_shell(host: Any) -> None:
    # testinfra runs `docker exec ... /bin/sh -c`: no login shell, so PATH must come from ENV.
    assert host.check_output("command -v python") == "/opt/env/bin/python"
    assert host.check_output("python --version").startswith("Python 3.11.")
    versions = json.loads(host.check_output(
        "python -c 'import json, tensorflow as tf, torch; "
        "print(json.dumps([tf.__version__, torch.__version__]))' 2>/dev/null"))
    assert versions == ["2.12.0", "2.13.0+cpu"]


def test_non_root_user(host: Any) -> None:
    assert host.user().uid == 1000 and host.user().name == "envgen"


def test_labels_and_profile_json(outcome: BuildOutcome, docker_client: DockerClient, host: Any) -> None:
    labels = docker_client.images.get(outcome.tag).labels
    assert labels["io.envgen.profile"] == "cpu-smoke"
    assert outcome.tag.endswith(labels["io.envgen.content-hash"][:12])
    # the user's image carries the user's metadata (issue 32 item 5): the profile's name, no licence or source
    # claimed for it, envgen's own facts under io.envgen.*
    assert labels["org.opencontainers.image.title"] == "cpu-smoke"
    assert "org.opencontainers.image.licenses" not in labels and "org.opencontainers.image.source" not in labels
    assert labels["io.envgen.version"]
    profile = json.loads(host.file("/etc/envgen/profile.json").content_string)
    assert profile["name"] == "cpu-smoke" and profile["expected"]["tensorflow"] == "2.12.0"
    assert host.file("/etc/envgen/smoke-report.json").exists


def test_no_ca_bundle_pip_cache_or_mirror_left(outcome: BuildOutcome, docker_client: DockerClient,
                                               host: Any) -> None:
    assert not host.file("/run/secrets/ca_bundle").exists
    assert not host.file("/root/.cache/pip").exists
    assert host.check_output("find / -xdev -name 'ca_bundle' 2>/dev/null | wc -l") == "0"
    assert host.check_output("find / -xdev -path '*/.cache/pip' 2>/dev/null | wc -l") == "0"
    history = " ".join(str(layer.get("CreatedBy", "")) for layer in docker_client.images.get(outcome.tag).history())
    assert "BEGIN CERTIFICATE" not in history


def test_push_remove_pull_and_run(outcome: BuildOutcome, docker_client: DockerClient, local_registry: str) -> None:
    registry = publish_registry(local_registry)
    assert "@sha256:" in push("cpu-smoke", registry=registry)
    for tag in (outcome.tag, remote_ref(registry, outcome.tag), alias("cpu-smoke")):
        remove_image(docker_client, tag, force=True)
    assert inspect_image(docker_client, outcome.tag) is None
    assert "smoke test on this host: pass" in pull("cpu-smoke", registry=registry)
    out = io.StringIO()
    code = run("cpu-smoke", command=["python", "-c", "import torch; print(torch.ones(2).sum().item())"],
               gpus="none", out=out.write)
    assert code == 0 and "2.0" in out.getvalue()
