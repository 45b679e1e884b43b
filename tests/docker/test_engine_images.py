"""list_images / inspect_image / tag / remove on labelled images."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import BuilderInfo, build_image, inspect_image, list_images, remove_image, tag_image
from envgen.docker.images import split_ref

if TYPE_CHECKING:
    from docker import DockerClient


def test_labelled_images_are_listed(
    docker_client: DockerClient, buildkit_builder: BuilderInfo, write_context: Callable[..., Path],
    new_tag: Callable[[str], str], tmp_path: Path, base_image: str,
) -> None:
    nonce = uuid.uuid4().hex
    ctx = write_context(f"RUN echo {nonce} > /nonce")
    ref, alias = new_tag("listed"), new_tag("alias")
    built = build_image(ctx, builder=buildkit_builder, tags=[ref],
                        labels={"io.envgen.profile": "images-test", "io.envgen.profile-hash": nonce},
                        log_path=tmp_path / "b.log", client=docker_client)
    tag_image(docker_client, built.image_id, alias)

    listed = {image.id: image for image in list_images(docker_client)}
    assert built.image_id in listed
    image = listed[built.image_id]
    assert set(image.tags) >= {ref, alias}
    assert image.labels["io.envgen.profile-hash"] == nonce
    assert image.size > 0
    assert abs(datetime.now(timezone.utc) - image.created) < timedelta(minutes=5)
    assert all(not i.tags or base_image not in i.tags for i in listed.values())  # unlabelled base left out

    detail = inspect_image(docker_client, alias)
    assert detail is not None and detail.id == built.image_id and detail.layers
    base = inspect_image(docker_client, base_image)
    assert base is not None and detail.layers[: len(base.layers)] == base.layers

    assert remove_image(docker_client, alias)
    assert inspect_image(docker_client, ref) is not None  # other tag keeps the image
    assert not remove_image(docker_client, alias)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("envgen/cpu-smoke:abc", ("envgen/cpu-smoke", "abc")),
        ("localhost:5000/envgen/x:1.0", ("localhost:5000/envgen/x", "1.0")),
        ("localhost:5000/envgen/x", ("localhost:5000/envgen/x", "latest")),
        ("debian", ("debian", "latest")),
    ],
)
def test_split_ref(ref: str, expected: tuple[str, str]) -> None:
    assert split_ref(ref) == expected
