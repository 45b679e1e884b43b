"""Fixtures for tests against a real engine. Every test under tests/docker gets the `docker` marker."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.conftest import session_namespace

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import BuilderInfo

BASE_IMAGE = "debian:bookworm-slim"  # made by scripts/make-base-image (no registry reachable)



@pytest.fixture(scope="session")
def base_image(docker_client: DockerClient, unavailable: Callable[[str], NoReturn]) -> str:
    from envgen.docker import inspect_image

    if inspect_image(docker_client, BASE_IMAGE) is None:
        unavailable(f"base image {BASE_IMAGE} missing (scripts/host-setup makes it)")
    return BASE_IMAGE


@pytest.fixture(scope="session")
def buildkit_builder(docker_client: DockerClient, unavailable: Callable[[str], NoReturn]) -> BuilderInfo:
    """The builder with build secrets for the engine under test: BuildKit through a docker CLI, or podman build."""
    from envgen.docker import detect_builder
    from envgen.docker.engine import engine_info
    from envgen.errors import InputError

    try:
        return detect_builder(choice="buildkit", engine=engine_info(docker_client))
    except InputError as exc:
        unavailable(exc.one_line())


@pytest.fixture(scope="session")
def classic_builder() -> BuilderInfo:
    from envgen.docker import detect_builder

    return detect_builder(choice="classic")


@pytest.fixture(params=["buildkit", "classic"])
def any_builder(request: pytest.FixtureRequest) -> BuilderInfo:
    name = "buildkit_builder" if request.param == "buildkit" else "classic_builder"
    builder: BuilderInfo = request.getfixturevalue(name)
    return builder


@pytest.fixture
def new_tag(docker_client: DockerClient) -> Iterator[Callable[[str], str]]:
    """Unique image names, removed (with their images) after the test."""
    made: list[str] = []

    def make(name: str = "t") -> str:
        ref = f"{session_namespace()}/{name}:{uuid.uuid4().hex[:12]}"
        made.append(ref)
        return ref

    yield make
    from envgen.docker import remove_image

    for ref in made:
        remove_image(docker_client, ref, force=True)


@pytest.fixture
def write_context(tmp_path: Path, base_image: str) -> Callable[..., Path]:
    """Write a build context: ``write_context("RUN echo hi", files={"a.txt": "x"})`` -> its directory."""

    def write(*instructions: str, files: dict[str, str] | None = None, name: str = "ctx") -> Path:
        ctx = tmp_path / name
        ctx.mkdir()
        body = "\n".join([f"FROM {base_image}", *instructions]) + "\n"
        (ctx / "Dockerfile").write_text(body)
        for rel, text in (files or {}).items():
            (ctx / rel).write_text(text)
        return ctx

    return write
