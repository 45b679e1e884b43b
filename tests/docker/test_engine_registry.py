"""push/pull against the local registry, and RegistryError for the ways it goes wrong."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import BuilderInfo, build_image, inspect_image, pull_image, push_image, remove_image
from envgen.docker.images import tag_image
from envgen.docker.push_pull import explain
from envgen.errors import RegistryError

if TYPE_CHECKING:
    from docker import DockerClient


def test_push_remove_pull(
    docker_client: DockerClient, local_registry: str, buildkit_builder: BuilderInfo,
    write_context: Callable[..., Path], new_tag: Callable[[str], str], tmp_path: Path,
) -> None:
    nonce = uuid.uuid4().hex
    ctx = write_context(f"RUN echo {nonce} > /nonce", 'LABEL io.envgen.profile="registry-test"')
    local = new_tag("pushed")  # Podman 4.3's router misreads /images/…/push/push: not "push"
    built = build_image(ctx, builder=buildkit_builder, tags=[local], log_path=tmp_path / "b.log",
                        client=docker_client)
    remote = f"{local_registry}/envgen-test/pushed:{nonce[:12]}"
    tag_image(docker_client, built.image_id, remote)
    try:
        statuses: list[str] = []
        digest = push_image(docker_client, remote, on_status=statuses.append)
        assert digest.startswith("sha256:") and len(digest) == 71
        assert statuses

        assert remove_image(docker_client, remote)
        assert remove_image(docker_client, local)
        assert inspect_image(docker_client, built.image_id) is None

        image_id = pull_image(docker_client, remote)
        assert image_id == built.image_id  # same config, same ID
        pulled = inspect_image(docker_client, remote)
        assert pulled is not None
        assert pulled.labels["io.envgen.profile"] == "registry-test"
        assert f"{local_registry}/envgen-test/pushed@{digest}" in pulled.digests
    finally:
        remove_image(docker_client, remote, force=True)


def test_registry_down(docker_client: DockerClient, base_image: str) -> None:
    ref = f"localhost:5999/envgen-test/down:{uuid.uuid4().hex[:8]}"
    tag_image(docker_client, base_image, ref)
    try:
        with pytest.raises(RegistryError) as info:
            push_image(docker_client, ref)
        line = info.value.one_line()
        assert "not reachable" in line and "localhost:5999" in line and "connection refused" in line
        with pytest.raises(RegistryError, match="not reachable"):
            pull_image(docker_client, ref)
    finally:
        remove_image(docker_client, ref)


def test_unknown_images(docker_client: DockerClient, local_registry: str) -> None:
    missing = f"{local_registry}/envgen-test/absent:{uuid.uuid4().hex[:8]}"
    with pytest.raises(RegistryError, match="has no such image"):
        pull_image(docker_client, missing)
    with pytest.raises(RegistryError, match="no local image"):
        push_image(docker_client, missing)


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        ("unauthorized: authentication required", "refused access"),
        ("no basic auth credentials", "docker login localhost:5000"),
        ("manifest for x not found: manifest unknown", "has no such image"),
        ('Get "http://localhost:5000/v2/": dial tcp 127.0.0.1:5000: connect: connection refused',
         "host-setup"),
    ],
)
def test_messages(detail: str, expected: str) -> None:
    assert expected in explain("localhost:5000/a/b:c", "push", detail).one_line()
