"""`envgen build --compression zstd` end to end (issue #44 item 4): on Docker >= 26 (scripts/engine-current) the
build of a profile already built with gzip is not reused (the tag names the content, not the layers' compression);
every layer of the sealed image `build --push` publishes is zstd (the seal's commit writes its layer with gzip:
pipeline.seal.recompressed exports it again), read back from the local registry's manifest, the one `envgen pull`
then fetches by digest, and its signed attestation holds no gzip layer; the image says its compression
(LABEL_COMPRESSION): zstd again reuses it, gzip builds again. On Docker 20.10 the request is one input error before
anything is rendered."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from envgen.errors import InputError
from envgen.pipeline.build import build
from envgen.vocabulary import LABEL_COMPRESSION
from tests.docker.test_build_zstd import ZSTD, _layer_types
from tests.pipeline.conftest import alias, minimal_profile, publish_registry

if TYPE_CHECKING:
    from pathlib import Path

    from docker import DockerClient


def _attestation_layer_types(ref: str, digest: str) -> list[str]:
    """The media types of the layers of the signed attestation stored beside ``ref``'s manifest ``digest``."""
    from envgen.docker.oci import Client, Repository, attestation_tag

    client = Client(Repository.of(ref))
    status, _, body = client.request("GET", f"{client.repo.base}/referrers/{digest}",
                                     headers={"Accept": "application/vnd.oci.image.index.v1+json"})
    digests = [str(entry["digest"]) for entry in json.loads(body).get("manifests") or []] if status == 200 else []
    found = [client.manifest(reference) for reference in [*digests, attestation_tag(digest)]]
    return [layer["mediaType"] for manifest in found if manifest is not None
            for layer in json.loads(manifest[1])["layers"]]


def test_a_zstd_build_is_built_again_pushed_and_pulled_with_zstd_layers_only(
        write_profile: Callable[[str, str], str], cleanup_tags: list[str], docker_client: DockerClient,
        local_registry: str, envgen_home: Path) -> None:
    from envgen.docker import detect_builder, inspect_image, remove_image
    from envgen.docker.engine import engine_info
    from envgen.docker.oci import DSSE_MEDIA_TYPE
    from envgen.pipeline.publish import pull, remote_ref

    name = write_profile("pipe-zstd", minimal_profile('"six==1.16.0"'))
    if not detect_builder(choice="auto", engine=engine_info(docker_client)).oci_rewrite:
        with pytest.raises(InputError, match="Docker 20.10 cannot store or pull them"):
            build(name, compression="zstd")
        assert not (envgen_home / "state" / "contexts" / name).exists()
        return
    first = build(name)
    cleanup_tags.extend([first.tag, alias(name)])
    registry = publish_registry(local_registry)
    second = build(name, compression="zstd", push=True, registry=registry)
    assert first.validated and second.validated and not second.cached and second.pushed
    sealed = inspect_image(docker_client, second.image_id)
    assert sealed is not None and sealed.labels.get("io.envgen.smoke") == "pass"
    ref = remote_ref(registry, second.tag)
    repo, tag = ref[len(local_registry) + 1:].rsplit(":", 1)
    digest, types = _layer_types(local_registry, repo, tag)
    assert second.pushed.endswith(digest)
    # every layer: the base's (loaded uncompressed from the host's engine), the build's and the seal's
    assert len(types) == len(sealed.layers) and set(types) == {ZSTD}, types
    attestation = _attestation_layer_types(ref, digest)
    assert attestation and set(attestation) == {DSSE_MEDIA_TYPE}, attestation  # a JSON envelope, never gzip
    for local in (second.tag, alias(name)):  # nothing of it left here under its names: pull fetches it
        remove_image(docker_client, local)
    pulled = pull(name, registry=registry)
    assert f"pulled {ref} ({digest[:19]}" in pulled, pulled  # by that digest: the manifest read above
    image = inspect_image(docker_client, second.tag)
    assert image is not None and image.layers == sealed.layers
    assert _layer_types(local_registry, repo, digest)[1] == types
    # the image records its compression: zstd again reuses it, gzip (every engine can pull it) does not
    assert image.labels.get(LABEL_COMPRESSION) == "zstd"
    assert build(name, compression="zstd").cached
    third = build(name)
    gzip = inspect_image(docker_client, third.image_id)
    assert not third.cached and third.validated and gzip is not None and LABEL_COMPRESSION not in gzip.labels
