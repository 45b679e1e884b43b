"""One profile, two platforms (issue #43): a small profile built for linux/amd64 and linux/arm64 in one buildx build on
Docker 26 (scripts/engine-current: the containerd image store, and `arm64-base` for a debian:bookworm-slim holding
both platforms), pushed to the local registry as one manifest list in the session's namespace; each platform's image
answers its own `uname -m` (arm64 through QEMU: qemu-user-static registered with binfmt's F flag, scripts/host-setup),
passes the probe's library tier, has a validation record of its own, is sealed (the index pushed again naming the
sealed images) and has a signed attestation pushed beside it; `envgen pull` of the index verifies this amd64 host's
image (`--platform linux/arm64`: the arm64 one, tagged for export), and refuses an untrusted signer, an index without
the host's platform and an index whose entries were swapped. pip in the emulated build downloads through the same
proxy and CA-bundle secret as the amd64 one (a pure-Python wheel, so the two sets are the same).

A locked profile (issue #43, locks per platform): numpy, whose wheels differ per platform, locked by `envgen lock` for
both platforms (uv resolves aarch64-manylinux beside x86_64; the base's manifest per platform read from the engine's
index), built into one manifest list where each platform's image installs its own set from
requirements.<TARGETARCH>.lock with --require-hashes: the arm64 image holds numpy's aarch64 wheel, the lock's, and
passes the library tier under QEMU.

scripts/test runs this module on its Docker 26 engine; on the host's 20.10 (no containerd store) it is unavailable.
About 13 minutes cold on 2 cores, nearly all of it the arm64 half under QEMU (its apt layer alone ~12 minutes:
maintainer scripts fork a process per file, each one a QEMU start); 23-110 s with the build cache warm (the seal
included: `pip freeze` under QEMU, two commits, two pushes; load-dependent). The locked case: 3.5 minutes cold at
load 5-7 (the arm64 apt layer 103 s, numpy's aarch64 wheel by uv 18 s, QEMU).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.pipeline.conftest import minimal_profile, publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker.oci import Client
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
    from envgen.pipeline.platform_seal import platform_tag

    for image in (*outcome.built.images, *outcome.unsealed):
        for ref in (outcome.built.by_digest(image), platform_tag(outcome.built.ref, image.platform)):
            with contextlib.suppress(Exception):
                docker_client.images.remove(ref, force=True)
        _delete_attestations(outcome.built.ref, image.digest)
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


def _delete_attestations(ref: str, digest: str) -> None:
    """The attestation manifest tagged beside ``digest`` (cosign's tag; registry 2.8 has no referrers API)."""
    from envgen.docker.oci import Client, Repository, attestation_tag

    client = Client(Repository.of(ref))
    with contextlib.suppress(Exception):
        found = client.manifest(attestation_tag(digest))
        if found is not None:
            client.request("DELETE", f"{client.repo.base}/manifests/{found[0]}")


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


def test_each_platform_image_is_sealed_on_the_image_its_probe_ran_in(built: PlatformsOutcome,
                                                                      docker_client: DockerClient) -> None:
    from envgen.docker import inspect_image, run_container
    from envgen.vocabulary import LABEL_SMOKE, LABEL_SMOKE_TESTED_IMAGE

    assert sorted(i.platform for i in built.unsealed) == sorted(PLATFORMS)
    for image in built.built.images:
        probed = next(i for i in built.unsealed if i.platform == image.platform)
        assert probed.digest != image.digest
        sealed = inspect_image(docker_client, built.built.by_digest(image))
        tested = inspect_image(docker_client, built.built.by_digest(probed))
        assert sealed is not None and tested is not None
        assert sealed.labels[LABEL_SMOKE] == "pass" and sealed.labels[LABEL_SMOKE_TESTED_IMAGE] == tested.id
        assert sealed.layers[:-1] == tested.layers and len(sealed.layers) == len(tested.layers) + 1
        report = run_container(docker_client, built.built.by_digest(image), ["cat", "/etc/envgen/smoke-report.json"],
                               platform=image.platform, timeout_s=120)
        assert json.loads(report.output)["status"] == "pass", report.output


def test_each_platform_image_carries_its_signed_attestation(built: PlatformsOutcome, envgen_home: Path,
                                                              docker_client: DockerClient) -> None:
    from envgen.docker import inspect_image
    from envgen.docker.oci import fetch_attestations, image_manifest
    from envgen.pipeline.attest import AttestationStore, signed_statement, verify
    from envgen.pipeline.keys import trusted_keys
    from envgen.pipeline.publish import MANIFEST_SUBJECT

    assert sorted(built.attested) == sorted(PLATFORMS)
    state = envgen_home / "state"
    for image in built.built.images:
        ref = built.built.by_digest(image)
        digest, body = image_manifest(ref)
        config = json.loads(body)["config"]["digest"]
        verdict = verify(fetch_attestations(ref, digest), trusted_keys(state), config, (), {MANIFEST_SUBJECT: digest})
        assert digest == image.digest and verdict.validated, (image.platform, verdict.reason)
        facts = verdict.predicate
        assert (facts["platform"], facts["emulated"]) == (image.platform, image.platform != "linux/amd64")
        assert facts["tier"] in ("libraries", "cpu") and facts["profile"] == built.profile
        assert facts["gpu_tier"].startswith("not run"), facts["gpu_tier"]
        local = inspect_image(docker_client, ref)
        assert local is not None
        kept = [signed_statement(e)["predicate"].get("platform") for e in AttestationStore(state).get(local.id)]
        assert image.platform in kept  # the state dir keeps it too
    arm64 = verify(fetch_attestations(built.built.ref, _digest(built, "linux/arm64")), trusted_keys(state),
                   _config(built, "linux/arm64"), (), {MANIFEST_SUBJECT: _digest(built, "linux/arm64")})
    assert "no linux/arm64 GPU is lent" in arm64.predicate["gpu_tier"]


def _digest(built: PlatformsOutcome, platform: str) -> str:
    return next(i.digest for i in built.built.images if i.platform == platform)


def _config(built: PlatformsOutcome, platform: str) -> str:
    from envgen.docker.oci import image_manifest

    _, body = image_manifest(f"{built.built.ref.rsplit(':', 1)[0]}@{_digest(built, platform)}")
    return str(json.loads(body)["config"]["digest"])


def _tag(name: str) -> str:
    from envgen.pipeline.resolve import profile_tag
    from envgen.profile import load_profile

    return profile_tag(load_profile(name))[0]


def test_envgen_pull_verifies_this_hosts_platform_and_run_says_it(built: PlatformsOutcome, local_registry: str,
                                                                    docker_client: DockerClient,
                                                                    tmp_path: Path) -> None:
    from envgen.pipeline.publish import pull
    from envgen.pipeline.run import run

    said = pull(built.profile, registry=publish_registry(local_registry))
    print(said)
    assert f"({_digest(built, 'linux/amd64')[:19]}, linux/amd64); its signed validation names this digest" in said
    found = docker_client.api.inspect_image(_tag(built.profile))
    assert (found["Os"], found["Architecture"]) == ("linux", "amd64")
    out: list[str] = []
    assert run(built.profile, command=["uname", "-m"], workdir=tmp_path, out=out.append) == 0
    assert f"envgen: running the linux/amd64 image of {_tag(built.profile)} (this host's platform)\n" in out, out
    assert "x86_64\n" in out, out


def test_pull_platform_arm64_verifies_it_and_tags_it_for_export(built: PlatformsOutcome, local_registry: str,
                                                                docker_client: DockerClient, tmp_path: Path) -> None:
    from envgen.errors import HostIncompatible
    from envgen.pipeline.publish import foreign_tag, pull
    from envgen.pipeline.run import run

    said = pull(built.profile, registry=publish_registry(local_registry), platform="linux/arm64")
    foreign = foreign_tag(_tag(built.profile), "linux/arm64")
    assert f"({_digest(built, 'linux/arm64')[:19]}, linux/arm64); its signed validation names" in said, said
    assert f"not smoke-tested here (its signed validation is its builder's); tagged {foreign}" in said
    assert docker_client.api.inspect_image(foreign)["Architecture"] == "arm64"
    with pytest.raises(HostIncompatible, match="is a linux/arm64 image and this host runs linux/amd64"):
        run(foreign, command=["true"], workdir=tmp_path, out=lambda _line: None)
    docker_client.images.remove(foreign)


def test_an_untrusted_signer_is_refused(built: PlatformsOutcome, local_registry: str, envgen_home: Path) -> None:
    from envgen.errors import ImageNotValidated
    from envgen.pipeline.keys import signing_key, trusted_keys
    from envgen.pipeline.publish import pull

    state = envgen_home / "state"
    own = state / "keys" / "trusted" / f"{signing_key(state).keyid}.pub"
    aside = own.with_suffix(".aside")
    own.rename(aside)
    try:
        assert not trusted_keys(state)
        with pytest.raises(ImageNotValidated, match=r"linux/amd64\) is not validated, so it was not pulled: signed "
                                                    r"by key \w+, which this host does not trust"):
            pull(built.profile, registry=publish_registry(local_registry), smoke=False)
    finally:
        aside.rename(own)


def test_an_index_without_the_host_platform_or_with_swapped_entries_is_refused(built: PlatformsOutcome,
                                                                              local_registry: str) -> None:
    """The index under the profile's tag replaced by hand in the registry (restored after): arm64 alone (the
    CLI's one line, exit 6), then the amd64 entry naming arm64's image (its statement says linux/arm64)."""
    from envgen.docker.oci import Client, Repository, image_manifest
    from envgen.errors import ImageNotValidated
    from envgen.pipeline.publish import pull

    ref, registry = built.built.ref, publish_registry(local_registry)
    _, original = image_manifest(ref)
    index = json.loads(original)
    client = Client(Repository.of(ref))
    arm64 = [m for m in index["manifests"] if m["platform"]["architecture"] == "arm64"]
    swapped = [{**arm64[0], "platform": {"os": "linux", "architecture": "amd64"}}, *arm64]
    try:
        _put(client, ref, {**index, "manifests": arm64})
        done = subprocess.run([sys.executable, "-m", "envgen", "pull", built.profile, "--registry", registry],
                              capture_output=True, text=True, timeout=120, env=dict(os.environ))
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 6 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "holds linux/arm64 and no linux/amd64 image" in lines[0] and "fix: build the profile for" in lines[0]
        _put(client, ref, {**index, "manifests": swapped})
        with pytest.raises(ImageNotValidated, match="not validated for linux/amd64: its signed validation is about "
                                                    "linux/arm64"):
            pull(built.profile, registry=registry, smoke=False)
    finally:
        _put(client, ref, original)
    assert image_manifest(ref)[0] == built.built.index_digest


def _put(client: Client, ref: str, index: dict[str, object] | bytes) -> None:
    """PUT an index under ``ref``'s tag (the same bytes give the same digest back)."""
    body = index if isinstance(index, bytes) else json.dumps(index).encode()
    media = json.loads(body)["mediaType"]
    status, _, _ = client.request("PUT", f"{client.repo.base}/manifests/{ref.rsplit(':', 1)[1]}", body,
                                  {"Content-Type": media})
    assert status == 201, status
