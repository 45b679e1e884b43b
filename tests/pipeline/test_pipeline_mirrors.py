"""A base image through a registry mirror, for real: a copy of the local Debian base is pushed to
the local registry under a name only this module uses (``library/envgen-mirrortest-<random>:1``),
its local tag removed, and a pip profile whose base is the *unqualified* name builds with
``docker.io`` mirrored to localhost:5000. `debian:bookworm-slim` itself is never removed or retagged
(only a new tag is added to its image, then removed). A digest-pinned base stays pinned through the
mirror. Both builders take the mirror (BuildKit and the classic SDK builder). Cost: ~3 min here
(three small builds: BuildKit ~8 s warm, classic ~45-90 s with its host-side wheel download), a few pushes/pulls."""

from __future__ import annotations

import contextlib
import secrets
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image, push_image, remove_image
from envgen.errors import RegistryError
from envgen.pipeline.build import build
from envgen.plan.image import plan_image
from envgen.render import render_in_memory
from tests.conftest import session_namespace
from tests.pipeline.conftest import alias, pushed_ref

if TYPE_CHECKING:
    from docker import DockerClient

LOCAL_BASE = "debian:bookworm-slim"

PROFILE = """\
description: mirror test profile
base: BASE
installer: pip
python: "3.11"
gpu: {required: false}
smoke: {matmul_size: 128, train_steps: 2}
packages:
  pip: ["six==1.16.0"]
mirrors:
  registries: {docker.io: "MIRROR"}
"""


@pytest.fixture(scope="module")
def mirrored_base(docker_client: DockerClient, local_registry: str) -> Iterator[tuple[str, str]]:
    """(unqualified name, manifest digest) of a base that exists only in the local registry."""
    name = f"envgen-mirrortest-{secrets.token_hex(4)}:1"
    in_registry = f"{local_registry}/library/{name}"
    if inspect_image(docker_client, LOCAL_BASE) is None:
        pytest.fail(f"{LOCAL_BASE} is missing: run scripts/host-setup")
    docker_client.api.tag(LOCAL_BASE, *in_registry.rsplit(":", 1))
    try:
        digest = push_image(docker_client, in_registry)
    finally:
        remove_image(docker_client, in_registry)  # only the tag this module added
    created = [in_registry, f"{in_registry.rsplit(':', 1)[0]}@{digest}"]
    assert inspect_image(docker_client, name) is None and inspect_image(docker_client, in_registry) is None
    yield name, digest
    for ref in created:
        remove_image(docker_client, ref, force=True)
    repo = in_registry.rsplit(":", 1)[0].split("/", 1)[1]
    request = urllib.request.Request(f"http://{local_registry}/v2/{repo}/manifests/{digest}", method="DELETE")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with contextlib.suppress(OSError):  # else the registry keeps an unreferenced test manifest; harmless
        opener.open(request, timeout=10).close()


@pytest.fixture(scope="module")
def built_tags(docker_client: DockerClient) -> Iterator[list[str]]:
    tags: list[str] = []
    yield tags
    for tag in tags:
        remove_image(docker_client, tag, force=True)


@pytest.mark.parametrize("builder", ["buildkit", "classic"])
def test_build_through_docker_io_mirror(builder: str, mirrored_base: tuple[str, str], envgen_home: Path,
                                        write_profile: Callable[[str, str], str], local_registry: str,
                                        built_tags: list[str], docker_client: DockerClient) -> None:
    name, _ = mirrored_base
    # One profile per builder: the tag is content-addressed, so a second builder would be a cache hit.
    profile_name = write_profile("mirror-tag" if builder == "buildkit" else "mirror-classic",
                                 PROFILE.replace("BASE", name).replace("MIRROR", local_registry))
    remove_image(docker_client, f"{local_registry}/library/{name}")  # our tag only: each build pulls it again
    lines: list[str] = []
    start = time.monotonic()
    outcome = build(profile_name, builder=builder, echo=lines.append)
    built_tags += [outcome.tag, alias(profile_name)]
    print(f"mirror build ({builder}): {time.monotonic() - start:.1f}s")
    assert outcome.validated and outcome.smoke is not None and outcome.smoke.passed
    assert any(f"through the mirror {local_registry}" in line for line in lines)
    # The mirror is a route: the tag and content hash are those of the profile without it.
    from envgen.kb import load_kb
    from envgen.profile import load_profile

    profile = load_profile(profile_name)
    bare = profile.model_copy(update={"mirrors": type(profile.mirrors)()})
    unmirrored = render_in_memory(plan_image(bare, load_kb()))
    assert outcome.tag.split("/", 1)[1] == unmirrored.tag.split("/", 1)[1]  # same profile:hash (namespace aside)
    assert outcome.tag.endswith(f":{unmirrored.content_hash[:12]}")
    image = inspect_image(docker_client, outcome.tag)
    assert image is not None and image.labels["org.opencontainers.image.base.name"] == name


def test_digest_pinned_base_stays_pinned_through_the_mirror(
        mirrored_base: tuple[str, str], envgen_home: Path, write_profile: Callable[[str, str], str],
        local_registry: str, built_tags: list[str], docker_client: DockerClient) -> None:
    name, digest = mirrored_base
    body = PROFILE.replace("BASE", f"{name}@{digest}").replace("MIRROR", local_registry)
    profile_name = write_profile("mirror-digest", body)
    lines: list[str] = []
    outcome = build(profile_name, echo=lines.append)
    built_tags += [outcome.tag, alias(profile_name)]
    assert outcome.validated
    pulled = f"{local_registry}/library/{name}@{digest}"
    assert any(pulled in line for line in lines) or inspect_image(docker_client, pulled) is not None
    image = inspect_image(docker_client, outcome.tag)
    assert image is not None and image.labels["org.opencontainers.image.base.digest"] == digest


def test_mirror_that_does_not_answer(envgen_home: Path, write_profile: Callable[[str, str], str]) -> None:
    name = f"envgen-mirrortest-absent-{secrets.token_hex(4)}:1"
    write_profile("mirror-down", PROFILE.replace("BASE", name).replace("MIRROR", "localhost:5999"))
    with pytest.raises(RegistryError) as info:
        build("mirror-down")
    line = info.value.one_line()
    assert info.value.cause == "unreachable" and "localhost:5999" in line and name in line and "fix:" in line


def test_mirror_without_the_image(envgen_home: Path, write_profile: Callable[[str, str], str],
                                  local_registry: str) -> None:
    name = f"envgen-mirrortest-absent-{secrets.token_hex(4)}:1"
    write_profile("mirror-lacks", PROFILE.replace("BASE", name).replace("MIRROR", local_registry))
    with pytest.raises(RegistryError) as info:
        build("mirror-lacks")
    line = info.value.one_line()
    assert info.value.cause == "missing" and local_registry in line and name in line and "docker push" in line


def test_pull_takes_the_same_mirrors(mirrored_base: tuple[str, str], envgen_home: Path, local_registry: str,
                                     built_tags: list[str], docker_client: DockerClient) -> None:
    """`envgen pull` from a registry this host cannot reach, through a mirror of it (localhost:5000)."""
    from envgen.pipeline.publish import pull, push

    namespace = session_namespace()  # what the session publishes is removed with the session's namespace
    pushed = push("mirror-tag", registry=f"{local_registry}/{namespace}")
    built_tags.append(pushed_ref(pushed)[0])
    unreachable = "registry.invalid:5000"
    config = envgen_home / "config.yaml"
    original = config.read_text(encoding="utf-8")
    config.write_text(original + f"mirrors:\n  registries: {{'{unreachable}': '{local_registry}'}}\n",
                      encoding="utf-8")
    try:
        message = pull("mirror-tag", registry=f"{unreachable}/{namespace}", smoke=False)
    finally:
        config.write_text(original, encoding="utf-8")
    assert f"pulled {local_registry}/{namespace}/mirror-tag:" in message and "labels match" in message
