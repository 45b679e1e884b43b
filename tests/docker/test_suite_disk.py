"""The suite's own disk keeping (tests/disk.py), on the real engine: a module's images go, and the build cache is
cut with one line saying so when the disk is under the threshold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import session_namespace
from tests.disk import KEEP_ENV, LOW_ENV, after_module, header

if TYPE_CHECKING:
    from docker import DockerClient


def test_a_modules_images_go_and_the_cache_is_cut_when_low(
    docker_client: DockerClient, base_image: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    namespace = f"{session_namespace()}-disk"
    ref = f"{namespace}/left-by-a-module:1"
    docker_client.api.tag(base_image, f"{namespace}/left-by-a-module", "1")
    # Any free space is "low" under a threshold of 10^6 GB; keeping 10^6 GB of cache removes nothing of it.
    monkeypatch.setenv(LOW_ENV, "1000000")
    monkeypatch.setenv(KEEP_ENV, "1000000")

    line = after_module(docker_client, namespace)

    assert all(ref not in (row.get("RepoTags") or ()) for row in docker_client.api.images())
    assert docker_client.api.inspect_image(base_image)["Id"]  # the base itself stays
    assert line is not None and "build cache cut to 1000000 GB" in line and "GB free now" in line


def test_no_cut_when_the_disk_has_room(docker_client: DockerClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOW_ENV, "0")
    assert after_module(docker_client, f"{session_namespace()}-disk") is None
    assert header(docker_client).startswith("disk: ") and " GB free" in header(docker_client)
