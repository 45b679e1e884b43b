"""A container with CDI devices on Podman, created by the podman CLI through the engine's socket.

Podman's Docker-compatible API (4.x) drops a device request of the ``cdi`` driver without a word, and reads a CDI
name in ``Devices`` as a path ("stat nvidia.com/gpu=all: no such file or directory"); podman's own ``--device
nvidia.com/gpu=all`` is the route (podman issue #19338). The container is created with ``podman --url SOCKET
create`` from the same keywords the SDK would get; starting, waiting, logs and removal then go through the SDK
(or `envgen run`'s socket client, envgen.docker.socket_engine) like any other container.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from envgen.docker.client import engine_url
from envgen.errors import EngineError, GpuRequestRefused

# what envgen says for podman, which answers a `--gpus` device request by starting the container without GPUs
NO_RUNTIME_REQUEST = ("Podman's Docker-compatible API drops a device request with capabilities [[gpu]] (docker run "
                      "--gpus) and starts the container without GPUs: podman has no NVIDIA runtime; ask for GPUs by "
                      "CDI (--device nvidia.com/gpu=all)")

if TYPE_CHECKING:
    from docker import DockerClient


def create_args(image: str, command: Sequence[str] | None, kwargs: Mapping[str, Any],
                cdi_devices: Sequence[str]) -> list[str]:
    """``podman create`` arguments for the SDK keywords run.py builds (shm_size, environment, volumes,
    working_dir, user, entrypoint, labels), with one ``--device`` per CDI name."""
    args = ["create"]
    if kwargs.get("shm_size"):
        args += ["--shm-size", str(kwargs["shm_size"])]
    for key, value in sorted((kwargs.get("environment") or {}).items()):
        args += ["--env", f"{key}={value}"]
    for host, bind in sorted((kwargs.get("volumes") or {}).items()):
        args += ["--volume", f"{host}:{bind['bind']}:{bind.get('mode', 'rw')}"]
    if kwargs.get("working_dir"):
        args += ["--workdir", str(kwargs["working_dir"])]
    if kwargs.get("user"):
        args += ["--user", str(kwargs["user"])]
    if kwargs.get("entrypoint") is not None:
        args += ["--entrypoint", json.dumps(list(kwargs["entrypoint"]))]
    for key, value in sorted((kwargs.get("labels") or {}).items()):
        args += ["--label", f"{key}={value}"]
    for device in cdi_devices:
        args += ["--device", device]
    return [*args, image, *(command or ())]


def create_container(client: DockerClient, image: str, command: str | Sequence[str] | None,
                     kwargs: Mapping[str, Any], cdi_devices: Sequence[str]) -> Any:
    """The SDK's Container for the container ``created_id`` makes."""
    return client.containers.get(created_id(image, command, kwargs, cdi_devices))


def created_id(image: str, command: str | Sequence[str] | None, kwargs: Mapping[str, Any],
               cdi_devices: Sequence[str]) -> str:
    """The ID of a container the podman CLI created with ``cdi_devices``; EngineError naming podman's refusal (an
    unknown CDI device: "unresolvable CDI devices nvidia.com/gpu=all"). Without CDI devices (a request through the
    NVIDIA runtime, which podman has not): GpuRequestRefused, never a container without the GPUs it asked for."""
    if not cdi_devices:
        raise GpuRequestRefused(NO_RUNTIME_REQUEST, reason="no-runtime")
    podman = shutil.which("podman")
    if podman is None:
        raise EngineError("the engine is Podman, whose Docker-compatible API cannot hand CDI devices to a container, "
                          "and no podman CLI is on PATH", fix="install podman (apt-get install podman)")
    cmd = shlex.split(command) if isinstance(command, str) else command  # as the SDK splits a string
    argv = [podman, "--url", engine_url(), *create_args(image, cmd, kwargs, cdi_devices)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        said = " ".join((done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").split())
        raise EngineError(f"could not start a container from {image}: {said}")
    return done.stdout.strip().splitlines()[-1]
