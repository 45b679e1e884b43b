"""The KB's `accounts` of debian:bookworm-slim (base_images.yaml, what `user-name-taken` reads) is a recorded run:
this replays it on the suite's base image and compares, so a row that no longer matches the image fails here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from envgen.docker import run_container
from envgen.kb import load_kb

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.docker


def test_the_recorded_accounts_of_bookworm_slim_are_the_images(docker_client: DockerClient, base_image: str) -> None:
    [row] = [r for r in load_kb().os_images if r.image == "debian" and "bookworm-slim" in r.tags]
    assert row.accounts and row.accounts_source and "recorded run" in row.accounts_source
    result = run_container(docker_client, base_image, ["cut", "-d:", "-f1", "/etc/passwd", "/etc/group"])
    assert result.exit_code == 0, result.output
    assert sorted(set(result.output.split())) == sorted(row.accounts)
