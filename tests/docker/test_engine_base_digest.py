"""Base images by digest, against the local registry: `envgen lock` reads the manifest digest the registry
serves for the tag, the render uses `name:tag@sha256:...`, and a digest the registry no longer has fails
before building with the digest and the fix. Seconds (one push of an existing image, no build)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import push_image, remove_image
from envgen.docker.images import tag_image
from envgen.errors import InputError
from envgen.lock.lock_base import check_local_base, check_registry_base, lock_base

if TYPE_CHECKING:
    from docker import DockerClient


def test_lock_reads_the_registry_digest_and_refuses_a_vanished_one(
        docker_client: DockerClient, local_registry: str, base_image: str, tmp_path: Path) -> None:
    ref = f"{local_registry}/envgen-test-i11-{uuid.uuid4().hex[:8]}/base:1"
    tag_image(docker_client, base_image, ref)
    try:
        pushed = push_image(docker_client, ref)
        pinned = lock_base(docker_client, ref, local=False)
        assert (pinned.field, pinned.value) == ("base-digest", pushed)
        check_registry_base(docker_client, f"{ref}@{pinned.value}")  # there: no error
        remove_image(docker_client, ref, force=True)
        check_registry_base(docker_client, f"{ref}@{pinned.value}")  # not local, still in the registry
        gone = "sha256:" + "0" * 64
        with pytest.raises(InputError) as caught:
            check_registry_base(docker_client, f"{ref}@{gone}")
        line = caught.value.one_line()
        assert gone in line and "envgen lock again" in line and "mirror" in line
    finally:
        remove_image(docker_client, ref, force=True)


def test_a_local_base_is_pinned_by_image_id(docker_client: DockerClient, base_image: str) -> None:
    pinned = lock_base(docker_client, base_image, local=True)
    assert pinned.field == "base-image-id" and pinned.value == docker_client.images.get(base_image).id
    assert check_local_base(docker_client, base_image, pinned.value, "x.lock.txt") is None
    # a local base is made on each machine: another ID is said (the build goes on with the lock's pins)
    said = check_local_base(docker_client, base_image, "sha256:" + "0" * 64, "x.lock.txt")
    assert said is not None and "the lock x.lock.txt was made with sha256:0000" in said
    with pytest.raises(InputError, match="is not in this engine"):
        lock_base(docker_client, f"envgen-test-i11-missing-{uuid.uuid4().hex[:6]}:1", local=True)
