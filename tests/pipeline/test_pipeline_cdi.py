"""CDI on every CI run, without a GPU: the test writes a CDI spec of kind nvidia.com/gpu for a device it makes
(a character device node, a file to mount, an env var, and PATH/LD_LIBRARY_PATH pointing at a "driver"
directory, as `nvidia-ctk cdi generate` writes them) into a spec directory that only the engine under test
reads, then starts a container the way `envgen run --gpus all` does (host facts -> route -> start_container).
The container must get the device node, the mount and the variable from the spec, and its own PATH and
LD_LIBRARY_PATH back in front of the spec's.

The engine needs CDI and a spec directory of its own: scripts/engine-current's Docker 26 lists
$ENVGEN_TEST_CDI_DIR (scripts/test sets it when it runs the engine tests there). Docker 20.10 has no CDI;
Podman reads only /etc/cdi and /var/run/cdi, which every engine on the machine shares, so a fake GPU spec
there would mislead the other tests' `envgen doctor`: this test says so and does not run on those.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import build_image, detect_builder, remove_image
from envgen.docker.engine import engine_info

if TYPE_CHECKING:
    from docker import DockerClient

CDI_DIR_ENV = "ENVGEN_TEST_CDI_DIR"
IMAGE_PATH = "/opt/img/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IMAGE_LIBS = "/opt/img/lib"
DRIVER = "/opt/fake-driver"
PROBE = ('echo "var=$ENVGEN_CDI_TEST"; echo "path=$PATH"; echo "libs=$LD_LIBRARY_PATH"; '
         'test -c /dev/envgen-fake0 && echo node=char; cat /opt/cdi-mounted/marker')


@pytest.fixture
def cdi_dir(docker_client: DockerClient) -> Path:
    given = os.environ.get(CDI_DIR_ENV)
    dirs = docker_client.info().get("CDISpecDirs") or []
    if not given or given not in dirs:
        engine = engine_info(docker_client)
        pytest.skip(f"{engine.name} {engine.version} lists CDI spec directories {dirs or 'none'} and "
                    f"${CDI_DIR_ENV} names {given or 'none'}: the fake GPU spec needs a directory only this engine "
                    "reads (scripts/engine-current's; scripts/test runs this test there)")
    return Path(given)


@pytest.fixture
def fake_gpu(cdi_dir: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(spec path, marker): a nvidia.com/gpu spec with devices "all" and "0" for a device node made here."""
    marker = uuid.uuid4().hex
    node = tmp_path / "fake0"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    (tmp_path / "marker").write_text(marker)
    edits = {"deviceNodes": [{"path": "/dev/envgen-fake0", "hostPath": str(node)}]}
    spec = {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
            "devices": [{"name": "0", "containerEdits": edits}, {"name": "all", "containerEdits": edits}],
            "containerEdits": {
                "env": [f"ENVGEN_CDI_TEST={marker}", f"LD_LIBRARY_PATH={DRIVER}/lib64",
                        f"PATH={DRIVER}/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                "mounts": [{"hostPath": str(tmp_path), "containerPath": "/opt/cdi-mounted",
                            "options": ["ro", "bind"]}]}}
    path = cdi_dir / f"envgen-test-{marker[:10]}.json"
    path.write_text(json.dumps(spec))
    try:
        yield str(path), marker
    finally:
        path.unlink(missing_ok=True)


@pytest.mark.parametrize("through", ["sdk", "socket"])  # the SDK's client, and `envgen run`'s own on a unix:// engine
def test_envgen_cdi_request_reaches_the_container_with_the_specs_edits(
        docker_client: DockerClient, fake_gpu: tuple[str, str], tmp_path: Path, through: str) -> None:
    from envgen.docker.socket_engine import SocketEngine, open_engine
    from envgen.pipeline.gpus import start_container
    from envgen.pipeline.tiers import host_facts, route_for

    client = docker_client if through == "sdk" else open_engine()
    assert through == "sdk" or isinstance(client, SocketEngine)

    spec_path, marker = fake_gpu
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "Dockerfile").write_text(
        f"FROM debian:bookworm-slim\nENV PATH={IMAGE_PATH} LD_LIBRARY_PATH={IMAGE_LIBS}\n")
    tag = f"envgen-test-cdi-{marker[:10]}:1"
    engine = engine_info(docker_client)
    built = build_image(context, builder=detect_builder(engine=engine), log_path=tmp_path / "build.log", tags=[tag],
                        client=docker_client)
    try:
        facts = host_facts()
        assert facts is not None and spec_path in {s.path for s in facts.cdi.specs}, facts
        route = route_for("all", facts, "cdi")
        assert route is not None and route.devices == ("nvidia.com/gpu=all",)
        result = start_container(client, built.image_id, ["/bin/sh", "-c", PROBE], gpus="all", route=route)
    finally:
        remove_image(docker_client, tag, force=True)
    lines = result.output.splitlines()
    assert result.exit_code == 0, result.output
    assert f"var={marker}" in lines and "node=char" in lines and lines[-1] == marker  # env, device node, mount
    # the image's own search paths first, the spec's after them
    assert f"path={IMAGE_PATH}:{DRIVER}/bin" in lines, lines
    assert f"libs={IMAGE_LIBS}:{DRIVER}/lib64" in lines, lines
