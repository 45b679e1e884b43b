"""One profile, two platforms (issue #43): a small profile built for linux/amd64 and linux/arm64 in one buildx build on
Docker 26 (scripts/engine-current: the containerd image store, and `arm64-base` for a debian:bookworm-slim holding
both platforms), pushed to the local registry as one manifest list in the session's namespace; each platform's image
answers its own `uname -m` (arm64 through QEMU: qemu-user-static registered with binfmt's F flag, scripts/host-setup),
passes the probe's library tier, and has a validation record of its own. pip in the emulated build downloads through
the same proxy and CA-bundle secret as the amd64 one (a pure-Python wheel, so the two sets are the same).

A locked profile (issue #43, locks per platform): numpy, whose wheels differ per platform, locked by `envgen lock` for
both platforms (uv resolves aarch64-manylinux beside x86_64; the base's manifest per platform read from the engine's
index), built into one manifest list where each platform's image installs its own set from
requirements.<TARGETARCH>.lock with --require-hashes: the arm64 image holds numpy's aarch64 wheel, the lock's, and
passes the library tier under QEMU.

scripts/test runs this module on its Docker 26 engine; on the host's 20.10 (no containerd store) it is unavailable.
About 13 minutes cold on 2 cores, nearly all of it the arm64 half under QEMU (its apt layer alone ~12 minutes:
maintainer scripts fork a process per file, each one a QEMU start); minutes with the build cache warm. The
locked case: 3.5 minutes cold at load 5-7 (the arm64 apt layer 103 s, numpy's aarch64 wheel by uv 18 s, QEMU).
"""

from __future__ import annotations

import contextlib
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.pipeline.conftest import minimal_profile, publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.pipeline.platforms import PlatformsOutcome

pytestmark = pytest.mark.slow

PLATFORMS = ("linux/amd64", "linux/arm64")
BASE = "debian:bookworm-slim"


def _delete(registry: str, ref: str, digest: str) -> None:
    """The index and its manifests out of the registry (delete is enabled on host-setup's registry)."""
    repo = ref.split("/", 1)[1].rsplit(":", 1)[0]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(f"http://{registry}/v2/{repo}/manifests/{digest}", method="DELETE")
    with contextlib.suppress(OSError):
        opener.open(request, timeout=10).close()


@pytest.fixture(scope="module")
def engine_ready(docker_client: DockerClient, unavailable: Callable[[str], NoReturn]) -> None:
    """The containerd image store, QEMU for arm64 and a base holding both platforms, or the module is unavailable."""
    from envgen.docker.engine import engine_info
    from envgen.docker.multiplatform import emulation_problem

    engine = engine_info(docker_client)
    if not engine.containerd_store:
        unavailable(f"Docker {engine.version} keeps images in the classic store: a multi-platform build needs the "
                    "containerd image store (scripts/engine-current; scripts/test runs this module there)")
    problem = emulation_problem("linux/arm64")
    if problem:
        unavailable(f"{problem} (sudo scripts/host-setup registers qemu-user-static)")
    machine = _base_machine(docker_client, "linux/arm64")
    if machine != "aarch64":
        unavailable(f"{BASE} as linux/arm64 answers {machine!r} here, not aarch64: sudo scripts/engine-current "
                    "arm64-base")


@pytest.fixture(scope="module")
def built(engine_ready: None, write_profile: Callable[[str, str], str], local_registry: str,
          docker_client: DockerClient) -> Iterator[PlatformsOutcome]:
    from envgen.pipeline.platforms import build_platforms, several_platforms

    name = write_profile("two-platforms", minimal_profile("six==1.16.0") + f"platforms: [{', '.join(PLATFORMS)}]\n")
    wanted = several_platforms(name)  # what `envgen build` asks before it takes this route
    assert wanted == PLATFORMS
    outcome = build_platforms(name, wanted, registry=publish_registry(local_registry))
    print(outcome.summary())  # the index and each platform's digest, in the log of the run (-s)
    yield outcome
    for image in outcome.built.images:
        with contextlib.suppress(Exception):
            docker_client.images.remove(outcome.built.by_digest(image), force=True)
        _delete(local_registry, outcome.built.ref, image.digest)
    _delete(local_registry, outcome.built.ref, outcome.built.index_digest)


@pytest.fixture(scope="module")
def locked(engine_ready: None, docker_client: DockerClient, write_profile: Callable[[str, str], str],
           local_registry: str, envgen_home: Path) -> Iterator[tuple[PlatformsOutcome, Path]]:
    """numpy locked for both platforms and built from the lock."""
    from envgen.lock.lock import lock
    from envgen.pipeline.platforms import build_platforms

    name = write_profile("two-platforms-locked", minimal_profile("numpy==1.26.4")
                         + f"platforms: [{', '.join(PLATFORMS)}]\n")
    done = lock(name, client=docker_client)
    print(done.summary())
    outcome = build_platforms(name, PLATFORMS, registry=publish_registry(local_registry))
    print(outcome.summary())
    yield outcome, done.path
    for image in outcome.built.images:
        with contextlib.suppress(Exception):
            docker_client.images.remove(outcome.built.by_digest(image), force=True)
        _delete(local_registry, outcome.built.ref, image.digest)
    _delete(local_registry, outcome.built.ref, outcome.built.index_digest)


def _base_machine(docker_client: DockerClient, platform: str) -> str:
    """What the base answers to `uname -m` as ``platform`` (the engine refuses a platform its image lacks)."""
    from envgen.docker import run_container
    from envgen.errors import EnvgenError

    try:
        result = run_container(docker_client, BASE, ["uname", "-m"], platform=platform, timeout_s=120)
    except EnvgenError as exc:
        return exc.one_line()
    return result.output.strip()


def test_one_manifest_list_holds_both_platforms(built: PlatformsOutcome) -> None:
    from envgen.docker.multiplatform import read_index

    digest, images = read_index(built.built.ref)
    assert digest == built.built.index_digest and digest.startswith("sha256:")
    assert sorted(i.platform for i in images) == sorted(PLATFORMS)
    assert len({i.digest for i in images}) == 2


@pytest.mark.parametrize(("platform", "machine"), [("linux/amd64", "x86_64"), ("linux/arm64", "aarch64")])
def test_each_platform_image_runs_as_its_machine(built: PlatformsOutcome, docker_client: DockerClient,
                                                 platform: str, machine: str) -> None:
    from envgen.docker import run_container

    image = next(i for i in built.built.images if i.platform == platform)
    ref = built.built.by_digest(image)
    result = run_container(docker_client, ref, ["uname", "-m"], platform=platform, timeout_s=120)
    assert (result.exit_code, result.output.strip()) == (0, machine)
    found = docker_client.api.inspect_image(ref)
    assert f"{found['Os']}/{found['Architecture']}" == platform


def test_pull_of_the_index_takes_the_host_platform(built: PlatformsOutcome, docker_client: DockerClient) -> None:
    from envgen.docker.multiplatform import host_platform
    from envgen.docker.push_pull import pull_image

    pull_image(docker_client, built.built.ref)
    found = docker_client.api.inspect_image(built.built.ref)
    assert f"{found['Os']}/{found['Architecture']}" == host_platform()
    docker_client.images.remove(built.built.ref, force=True)


def test_library_tier_passes_on_each_platform_and_is_recorded(built: PlatformsOutcome, envgen_home: Path,
                                                               docker_client: DockerClient) -> None:
    from envgen.docker import inspect_image
    from envgen.pipeline.state import ValidationStore

    assert sorted(built.reports) == sorted(PLATFORMS)
    for platform, report in built.reports.items():
        assert report.passed, (platform, report.raw.get("summary"))
        assert report.tier in ("libraries", "cpu"), (platform, report.tier)
    store = ValidationStore(envgen_home / "state")
    ids = set()
    for image in built.built.images:
        found = inspect_image(docker_client, built.built.by_digest(image))
        assert found is not None, image
        record = store.get(found.id)
        assert record is not None and record.status == "pass", (image.platform, found.id)
        ids.add(found.id)
    assert len(ids) == 2  # one record per platform image
    assert any("linux/arm64" in note and "none is lent" in note for note in built.notes), built.notes


NUMPY_WHEEL = "lib/python3.11/site-packages/numpy-1.26.4.dist-info/WHEEL"


def test_a_locked_profile_installs_each_platforms_own_wheels(locked: tuple[PlatformsOutcome, Path],
                                                             docker_client: DockerClient) -> None:
    from envgen.docker import run_container
    from envgen.plan.lock_platforms import locked_platforms, parse_blocks
    from envgen.plan.lockfile import read_lock

    outcome, path = locked
    assert locked_platforms(path) == PLATFORMS
    amd64, arm64 = read_lock(path), parse_blocks(path.read_text(encoding="utf-8"))["linux/arm64"]
    numpy = [next(e for e in found.extras if e.name == "numpy") for found in (amd64, arm64)]
    assert numpy[0].sha256 != numpy[1].sha256  # numpy's wheels differ per platform
    assert "aarch64" in arm64.uv_wheel and arm64.target.endswith("_aarch64")
    manifests = dict(pair.split("=") for pair in (amd64.field("base-manifests") or "").split())
    assert sorted(manifests) == sorted(PLATFORMS) and all(d.startswith("sha256:") for d in manifests.values())
    tags = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
    for image in outcome.built.images:
        result = run_container(docker_client, outcome.built.by_digest(image), ["cat", f"/opt/env/{NUMPY_WHEEL}"],
                               platform=image.platform, timeout_s=300)
        wheel_tags = [line.split(": ", 1)[1] for line in result.output.splitlines() if line.startswith("Tag: ")]
        assert result.exit_code == 0 and wheel_tags, (image.platform, result.output)
        assert all(tag.endswith(tags[image.platform]) for tag in wheel_tags), (image.platform, wheel_tags)
    for platform, report in outcome.reports.items():
        assert report.passed, (platform, report.raw.get("summary"))
    assert sorted(outcome.reports) == sorted(PLATFORMS)
