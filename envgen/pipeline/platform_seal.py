"""The seal of a multi-platform build: each platform's image, once its probe passed, gets the child layer a
one-platform build's image gets (``pipeline/seal.py``: the verdict and the resolved package list, and the labels
naming them), and the index is pushed again naming the sealed images.

The probe's evidence is kept as a one-platform build keeps it: the probe ran in the built image, whose ID the seal
names (``io.envgen.smoke-tested-image``) and whose layers are the sealed image's but its last; the validation record
is carried over to the sealed image, and the statements signed afterwards (``platforms.attest_platform``) name the
sealed images' digests, the ones the index lists. Each sealed image is pushed under ``<tag>-<arch>`` (a registry
needs a tag to push an image through the engine); the index under the build's tag then lists them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from envgen.docker import inspect_image, push_image, tag_image
from envgen.docker.multiplatform import MultiPlatformResult, PlatformImage, read_index
from envgen.errors import RegistryError
from envgen.imageref import parse_ref
from envgen.pipeline.seal import seal
from envgen.pipeline.state import ValidationStore
from envgen.smoke.report import SmokeReport

if TYPE_CHECKING:
    from docker import DockerClient

OCI_INDEX = "application/vnd.oci.image.index.v1+json"


def platform_tag(ref: str, platform: str) -> str:
    """``registry/repo:<tag>-<arch>``: where one platform's sealed image is pushed."""
    return f"{ref}-{platform.rsplit('/', 1)[-1]}"


def seal_platform(client: DockerClient, built: MultiPlatformResult, image: PlatformImage, report: SmokeReport,
                  store: ValidationStore) -> tuple[PlatformImage, str]:
    """Seal one platform's probed image (its package list read by ``pip freeze`` in it, under QEMU for a foreign
    platform), carry its record over, push it; (the sealed image in the registry, its local ID)."""
    from envgen.pipeline.build import freeze
    from envgen.pipeline.validity import sign_pass

    found = inspect_image(client, built.by_digest(image))
    record = store.get(found.id) if found is not None else None
    if found is None or record is None or not record.passed:
        raise RegistryError(f"{built.by_digest(image)} ({image.platform}) has no passing validation here, so it "
                            "is not sealed", fix="build the profile again")
    sealed_id = seal(client, found.id, report, freeze(client, found.id))
    sealed = replace(record, image_id=sealed_id)
    store.record(sealed)
    sign_pass(client, store.dir.parent, sealed)  # the local statement, as a one-platform build's
    target = platform_tag(built.ref, image.platform)
    tag_image(client, sealed_id, target)
    return PlatformImage(image.platform, push_image(client, target)), sealed_id


def push_index(built: MultiPlatformResult, images: tuple[PlatformImage, ...]) -> str:
    """The index under the build's tag again, each platform's entry naming its sealed image (the entries'
    platforms as the build wrote them); its digest, read back."""
    from envgen.docker.oci import Client, Repository, image_manifest

    _, original = image_manifest(built.ref)
    platforms = {f"{e['platform']['os']}/{e['platform']['architecture']}": e["platform"]
                 for e in json.loads(original).get("manifests") or [] if isinstance(e.get("platform"), dict)}
    client, entries = Client(Repository.of(built.ref)), []
    for image in images:
        digest, body = image_manifest(f"{parse_ref(built.ref).name}@{image.digest}")
        entries.append({"mediaType": json.loads(body).get("mediaType") or "application/vnd.oci.image.manifest.v1+json",
                        "digest": digest, "size": len(body), "platform": platforms[image.platform]})
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries},
                       sort_keys=True, separators=(",", ":")).encode()
    status, _, _ = client.request("PUT", f"{client.repo.base}/manifests/{parse_ref(built.ref).tag}", index,
                                  {"Content-Type": OCI_INDEX})
    if status != 201:
        raise RegistryError(f"the registry {client.repo.host} answered {status} to the sealed index of {built.ref}",
                            fix="check the registry and the login")
    digest, listed = read_index(built.ref)
    if {(i.platform, i.digest) for i in listed} != {(i.platform, i.digest) for i in images}:
        raise RegistryError(f"{built.ref} does not list the sealed images after the push",
                            fix="another push replaced the tag meanwhile: build again")
    return digest


def seal_platforms(client: DockerClient, built: MultiPlatformResult, reports: dict[str, SmokeReport],
                   store: ValidationStore) -> tuple[MultiPlatformResult, dict[str, str]]:
    """Every platform's image sealed and pushed, then the index naming them; (the build as now pushed, platform ->
    the sealed image's local ID)."""
    sealed: list[PlatformImage] = []
    local: dict[str, str] = {}
    for image in built.images:
        pushed, local[image.platform] = seal_platform(client, built, image, reports[image.platform], store)
        sealed.append(pushed)
    images = tuple(sealed)
    return replace(built, index_digest=push_index(built, images), images=images), local
