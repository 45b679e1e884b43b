"""Issue #40: a validation is a signed statement about a digest, and every attack the issue found is refused with
one line, on the real engine and the local registry (localhost:5000, Debian's docker-registry: no OCI referrers API,
so the attestation goes under cosign's tag ``sha256-<digest>.att``).

One minimal image (six) is built and signed for the module; the attacks reuse it: an image built FROM it adding a
file, a --no-smoke profile on it, a bundle whose checksums were recomputed around the built-on image, a bundle whose
archive carries foreign tags, the registry's tag overwritten after the push, the attestation copied to the forged
digest, and a state directory that does not trust the key. Cost: one small build, one --no-smoke build on top of it,
three bundles of ~50 MB and two pushes of one image."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.docker.archive import save_stream
from envgen.docker.images import tag_all
from envgen.docker.oci import attestation_tag, fetch_attestations, image_manifest
from envgen.errors import BundleError, ImageMismatch, ImageNotValidated
from envgen.pipeline.attest import AttestationStore, verify
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.bundle import load, save
from envgen.pipeline.image_list import image_rows
from envgen.pipeline.keys import key_action, trusted_keys
from envgen.pipeline.publish import pull, push, remote_ref
from envgen.pipeline.run import run
from envgen.plan.image import plan_image
from tests.pipeline.conftest import alias, minimal_profile, publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

NAME = "att-min"
ON_TOP = """\
description: a --no-smoke profile on a validated envgen image
base: {base}
local_base: true
installer: pip
python: "3.11"
gpu: {{required: false}}
base_provides: {{python: /opt/env/bin/python3, packages: {{six: "1.16.0"}}}}
smoke: {{matmul_size: 128, train_steps: 2}}
packages:
  pip: ["six==1.16.0"]
"""


@pytest.fixture(scope="module")
def built(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> BuildOutcome:
    outcome = build(write_profile(NAME, minimal_profile('"six==1.16.0"')))
    cleanup_tags += [outcome.tag, alias(NAME)]
    return outcome


@pytest.fixture(scope="module")
def built_on(built: BuildOutcome, docker_client: DockerClient, cleanup_tags: list[str]) -> str:
    """The issue's first attack: FROM the validated image, one file added; every label copied."""
    tag = alias("att-evil")
    cleanup_tags.append(tag)
    dockerfile = f"FROM {built.image_id}\nUSER root\nRUN echo owned > /etc/evil\n"
    docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    image = inspect_image(docker_client, tag)
    assert image is not None and image.labels["io.envgen.smoke"] == "pass"  # the labels claim a pass
    return image.id


@pytest.fixture(scope="module")
def bundle(built: BuildOutcome, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("bundles")
    path = folder / "att-min.bundle"
    save(NAME, path)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def _refused_line(exc: pytest.ExceptionInfo[Any]) -> str:
    line = exc.value.one_line()
    assert "\n" not in line and "Traceback" not in line
    return line


def _row(docker_client: DockerClient, image_id: str) -> dict[str, Any]:
    return next(r for r in image_rows() if r["id"] == image_id)


def test_a_pass_is_a_signed_statement_about_the_image_digest(built: BuildOutcome, envgen_home: Path,
                                                             docker_client: DockerClient) -> None:
    state = envgen_home / "state"
    image = inspect_image(docker_client, built.tag)
    assert image is not None
    verdict = verify(AttestationStore(state).get(built.image_id), trusted_keys(state), image.id, image.layers)
    assert verdict.validated and verdict.tier == "cpu" and verdict.predicate["profile"] == NAME
    assert verdict.predicate["report"]["status"] == "pass" and verdict.predicate["lock"]["freeze_sha256"]
    assert _row(docker_client, built.image_id)["signed_by"] == verdict.keyid[:12]


def test_a_record_of_an_envgen_before_signatures_is_named_and_signed_again(built: BuildOutcome, envgen_home: Path,
                                                                           docker_client: DockerClient) -> None:
    """An image validated by an older envgen: its record, no statement. `run` refuses it saying so; `envgen smoke`
    signs it."""
    from envgen.pipeline.smoke import smoke

    store = AttestationStore(envgen_home / "state")
    store._path(built.image_id).unlink()
    with pytest.raises(ImageNotValidated) as refused:
        run(built.tag, command=["true"], gpus="none")
    assert "validated by an envgen before signed validations (unsigned, from its record)" in _refused_line(refused)
    assert "envgen smoke" in refused.value.one_line()
    assert "unsigned, from its record" in _row(docker_client, built.image_id)["validation"]
    assert smoke(built.tag).passed
    row = _row(docker_client, built.image_id)
    assert row["validation"] == "pass (cpu-only)" and row["signed_by"]


def test_an_image_built_on_a_validated_one_is_not_validated(built: BuildOutcome, built_on: str,
                                                            docker_client: DockerClient) -> None:
    with pytest.raises(ImageNotValidated) as refused:
        run(built_on, command=["cat", "/etc/evil"], gpus="none")
    assert "has not passed its smoke test" in _refused_line(refused)
    assert _row(docker_client, built_on)["validation"].startswith("not validated")
    # under the profile's own tag it is neither pushed nor bundled
    tag_all(docker_client, built_on, [built.tag])
    try:
        with pytest.raises(ImageNotValidated) as refused:
            push(NAME, registry="localhost:5000/never-used")
        assert "is not validated, so it is not pushed: no signed validation names its digest" in \
            _refused_line(refused)
        with pytest.raises(ImageNotValidated, match="not bundled"):
            save(NAME, Path("/nonexistent/never-written.bundle"))
    finally:
        tag_all(docker_client, built.image_id, [built.tag])


def test_no_smoke_on_a_validated_base_inherits_no_pass(built: BuildOutcome, write_profile: Callable[[str, str], str],
                                                       cleanup_tags: list[str], docker_client: DockerClient) -> None:
    name = write_profile("att-top", ON_TOP.format(base=alias(NAME)))
    top = build(name, smoke=False)
    cleanup_tags += [top.tag, alias(name)]
    image = inspect_image(docker_client, top.tag)
    assert image is not None and image.labels["io.envgen.smoke"] == "" and image.labels["io.envgen.smoke-tier"] == ""
    assert _row(docker_client, image.id)["validation"].startswith("not validated")
    with pytest.raises(ImageNotValidated, match="not pushed"):
        push(name, registry="localhost:5000/never-used")


def _rewrite(source: Path, target: Path, payload: bytes, image_id: str | None = None) -> Path:
    """A copy of the bundle ``source`` whose image.tar.gz is ``payload`` (a gzip'd `docker save` tar), with every
    checksum of its manifest recomputed (and its image ID, when given): what a forger can do without the key."""
    with tarfile.open(source) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    manifest = json.loads(members["manifest.json"])
    members["image.tar.gz"] = payload
    digest = hashlib.sha256(payload).hexdigest()
    manifest["files"]["image.tar.gz"] = {"sha256": digest, "size": len(payload)}
    manifest["payload_sha256"] = digest
    manifest["image_id"] = image_id or manifest["image_id"]
    members["manifest.json"] = json.dumps(manifest).encode()
    with tarfile.open(target, "w") as tar:
        for name in ("manifest.json", "validation.json", "smoke-report.json", "attestations.json", "image.tar.gz"):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            tar.addfile(info, io.BytesIO(members[name]))
    return target


def test_a_bundle_rehashed_around_another_image_is_refused(bundle: Path, built_on: str,
                                                           docker_client: DockerClient) -> None:
    payload = gzip.compress(b"".join(save_stream(docker_client, built_on)), compresslevel=1, mtime=0)
    forged = _rewrite(bundle, bundle.with_name("rehashed.bundle"), payload, image_id=built_on)
    with pytest.raises(BundleError) as refused:
        load(forged)
    assert f"holds image {built_on[:19]}, which is not validated" in _refused_line(refused)
    assert "signature covers another digest" in refused.value.message


def test_a_bundle_carrying_foreign_tags_is_refused_naming_them(bundle: Path, built: BuildOutcome,
                                                               docker_client: DockerClient) -> None:
    with tarfile.open(bundle) as tar:
        archive = gzip.decompress(tar.extractfile("image.tar.gz").read())  # type: ignore[union-attr]
    rewritten = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(archive)) as src, tarfile.open(fileobj=rewritten, mode="w") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if member.name == "manifest.json":
                index = json.loads(data or b"[]")
                index[0]["RepoTags"] = ["rel-victim:latest", "debian:bookworm-slim"]
                data = json.dumps(index).encode()
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    debian = inspect_image(docker_client, "debian:bookworm-slim")
    forged = _rewrite(bundle, bundle.with_name("retag.bundle"), gzip.compress(rewritten.getvalue(), 1, mtime=0))
    with pytest.raises(BundleError) as refused:
        load(forged)
    assert "carries image names of its own (debian:bookworm-slim, rel-victim:latest)" in _refused_line(refused)
    assert inspect_image(docker_client, "rel-victim:latest") is None
    after = inspect_image(docker_client, "debian:bookworm-slim")
    assert (after.id if after else None) == (debian.id if debian else None)
    # the bundle as written loads, with the verified tags alone
    message = load(bundle)
    assert f"loaded {built.tag} and :latest" in message and "signed validation (cpu) names its digest" in message


def _other_state(envgen_home: Path, name: str) -> dict[str, str]:
    import os

    home = envgen_home / name
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n", encoding="utf-8")
    return {**os.environ, "ENVGEN_CONFIG": str(home / "config.yaml")}


def test_a_pushed_attestation_verifies_only_where_the_key_is_trusted(built: BuildOutcome, envgen_home: Path,
                                                                     local_registry: str,
                                                                     docker_client: DockerClient) -> None:
    registry = publish_registry(local_registry)
    message = push(NAME, registry=registry)
    remote = remote_ref(registry, built.tag)
    digest, _ = image_manifest(remote)
    assert f"signed attestation: {remote.rsplit(':', 1)[0]}:{attestation_tag(digest)}" in message
    stored = fetch_attestations(remote, digest)
    assert len(stored) == 1
    # what the registry holds verifies with an independent DSSE verifier (securesystemslib) and names the manifest
    from securesystemslib import dsse
    from securesystemslib.signer import SSlibKey

    key = trusted_keys(envgen_home / "state")
    keyid, public = next(iter(key.items()))
    envelope = dsse.Envelope.from_dict(stored[0])
    assert list(envelope.verify([SSlibKey.from_crypto(public, keyid=keyid)], 1)) == [keyid]
    assert {"name": "image-manifest", "digest": {"sha256": digest[7:]}} in json.loads(envelope.payload)["subject"]
    laptop = _other_state(envgen_home, "laptop")
    with pytest.raises(ImageNotValidated) as refused:
        pull(NAME, registry=registry, smoke=False, env=laptop)
    assert "which this host does not trust" in _refused_line(refused)
    exported = envgen_home / "ci.pub"
    exported.write_text(key_action("export", envgen_home / "state") + "\n", encoding="utf-8")
    key_action("trust", Path(laptop["ENVGEN_CONFIG"]).parent / "state", str(exported))
    remove_image(docker_client, alias(NAME))
    pulled = pull(NAME, registry=registry, smoke=False, env=laptop)
    assert "its signed validation names this digest" in pulled and "tagged" in pulled
    latest = inspect_image(docker_client, alias(NAME))
    assert latest is not None and latest.id == built.image_id  # :<hash> and :latest together


def _registry_manifest(ref: str, reference: str, body: bytes | None = None) -> bytes:
    repo = ref.split("/", 1)[1].rsplit(":", 1)[0]
    url = f"http://{ref.split('/', 1)[0]}/v2/{repo}/manifests/{reference}"
    headers = {"Accept": "application/vnd.oci.image.manifest.v1+json",
               "Content-Type": "application/vnd.oci.image.manifest.v1+json"}
    request = urllib.request.Request(url, data=body, method="PUT" if body else "GET", headers=headers)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=30) as answer:
        return bytes(answer.read())


def test_a_registry_tag_replaced_after_the_push_is_refused(built: BuildOutcome, built_on: str, local_registry: str,
                                                            docker_client: DockerClient) -> None:
    registry = publish_registry(local_registry)
    remote = remote_ref(registry, built.tag)
    signed, _ = image_manifest(remote)
    docker_client.api.tag(built_on, *remote.rsplit(":", 1))
    docker_client.images.push(remote)
    remove_image(docker_client, remote)
    forged, _ = image_manifest(remote)
    assert forged != signed
    with pytest.raises(ImageNotValidated) as refused:
        pull(NAME, registry=registry, smoke=False)
    assert "the registry holds no signed validation beside it" in _refused_line(refused)
    # the genuine attestation copied beside the forged digest: its signature covers the other one
    _registry_manifest(remote, attestation_tag(forged), _registry_manifest(remote, attestation_tag(signed)))
    with pytest.raises(ImageNotValidated) as refused:
        pull(NAME, registry=registry, smoke=False)
    assert "signature covers another digest" in _refused_line(refused)
    # the validated tags kept their image; the forged one was never pulled
    for tag in (built.tag, alias(NAME)):
        kept = inspect_image(docker_client, tag)
        assert kept is not None and kept.id == built.image_id
    assert not any(inspect_image(docker_client, t) for t in (f"{remote.rsplit(':', 1)[0]}@{forged}",))


def test_pull_rejects_a_signed_image_with_another_profiles_labels(built: BuildOutcome, envgen_home: Path,
                                                                  local_registry: str, docker_client: DockerClient,
                                                                  write_profile: Callable[[str, str], str]) -> None:
    """The labels still have to match the profile: a signed att-min pushed under another profile's tag."""
    from envgen.kb import load_kb
    from envgen.pipeline.publish import push_attestation
    from envgen.pipeline.validity import image_verdict
    from envgen.profile import load_profile
    from envgen.render import render_in_memory

    other = write_profile("att-other", minimal_profile('"six==1.16.0"'))
    ref = remote_ref(publish_registry(local_registry), render_in_memory(plan_image(load_profile(other), load_kb())).tag)
    docker_client.api.tag(built.image_id, *ref.rsplit(":", 1))
    docker_client.images.push(ref)
    remove_image(docker_client, ref)
    image = inspect_image(docker_client, built.image_id)
    assert image is not None
    push_attestation(envgen_home / "state", image, image_verdict(envgen_home / "state", image).predicate,
                     f"{ref}@{image_manifest(ref)[0]}")
    with pytest.raises(ImageMismatch, match="does not match the local profile 'att-other'"):
        pull(other, registry=publish_registry(local_registry), smoke=False)
