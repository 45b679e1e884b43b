"""zstd layers on the real engine (issue #44 item 4). On Docker >= 26 with the containerd image store (the suite
run against scripts/engine-current): build_image(compression="zstd") gives an image whose pushed layers are
zstd-compressed, read back from the local registry's manifest (the tag and the manifest removed after). On an
engine whose builder cannot write them (Docker 20.10): the request is one input error, before anything runs."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import session_namespace

if TYPE_CHECKING:
    from docker import DockerClient

ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
ACCEPT = "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _manifest(url: str) -> tuple[str, dict[str, object]]:
    with _NO_PROXY.open(urllib.request.Request(url, headers={"Accept": ACCEPT}), timeout=30) as response:
        return response.headers.get("Docker-Content-Digest", ""), json.loads(response.read())


def _layer_types(registry: str, repo: str, tag: str) -> tuple[str, list[str]]:
    digest, document = _manifest(f"http://{registry}/v2/{repo}/manifests/{tag}")
    if "manifests" in document:
        image = next(m for m in document["manifests"]  # type: ignore[attr-defined]
                     if m.get("platform", {}).get("architecture") == "amd64")
        _, document = _manifest(f"http://{registry}/v2/{repo}/manifests/{image['digest']}")
    return digest, [layer["mediaType"] for layer in document["layers"]]  # type: ignore[attr-defined]


def test_zstd_layers_where_the_builder_can_write_them(
        docker_client: DockerClient, local_registry: str, tmp_path: Path) -> None:
    from envgen.docker import detect_builder, remove_image
    from envgen.docker.build import build_image, with_compression
    from envgen.docker.engine import engine_info
    from envgen.errors import InputError

    builder = detect_builder(choice="buildkit", engine=engine_info(docker_client))
    if not builder.oci_rewrite:
        with pytest.raises(InputError, match="cannot store or pull them"):
            with_compression(builder, "zstd")
        # this engine's answer is the refusal (checked above); scripts/test's Docker 26 stage runs this file again,
        # where the zstd build below is pushed and read back
        return
    (tmp_path / "Dockerfile").write_text("FROM debian:bookworm-slim\nARG SOURCE_DATE_EPOCH=1795470249\n"
                                         "RUN head -c 2000000 /dev/urandom > /blob\n", encoding="utf-8")
    repo = f"{session_namespace()}/zstd-layers"
    tag = f"{local_registry}/{repo}:1"
    result = build_image(tmp_path, builder=builder, log_path=tmp_path / "build.log", tags=[tag],
                         client=docker_client, compression="zstd")
    try:
        pushed = subprocess.run([builder.cli or "docker", "push", tag], capture_output=True, text=True, check=False)
        assert pushed.returncode == 0, pushed.stderr
        digest, types = _layer_types(local_registry, repo, "1")
        assert types and set(types) == {ZSTD}, types
        _NO_PROXY.open(urllib.request.Request(f"http://{local_registry}/v2/{repo}/manifests/{digest}",
                                              method="DELETE"), timeout=30).close()
    finally:
        remove_image(docker_client, result.image_id, force=True)


def test_the_cli_asks_for_zstd_and_the_old_engine_refuses_it_in_one_line(docker_client: DockerClient,
                                                                          tmp_path: Path) -> None:
    """`envgen build --compression zstd`: on an engine whose builder cannot write zstd (Docker 20.10) one line with
    the way out, exit 2, before anything is rendered or built; where it can (Docker 26), the option reaches
    build_image (the test above pushes such an image), and here a wrong name is still refused first."""
    import os
    import sys

    from envgen.docker import detect_builder
    from envgen.docker.engine import engine_info

    (tmp_path / "c.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    env = {**os.environ, "ENVGEN_CONFIG": str(tmp_path / "c.yaml")}
    can = detect_builder(choice="auto", engine=engine_info(docker_client)).oci_rewrite
    asked = "brotli" if can else "zstd"
    result = subprocess.run([sys.executable, "-m", "envgen", "build", "cpu-minimal", "--compression", asked],
                            capture_output=True, text=True, env=env, timeout=300, check=False)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert ("'brotli' is not one envgen knows" if can else "Docker 20.10 cannot store or pull them") in lines[0]
    assert can or "engine-current" in lines[0]
    assert not (tmp_path / "state" / "contexts").exists()
