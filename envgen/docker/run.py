"""Run a command in a container: GPU device request (the NVIDIA runtime's, or CDI's), working directory mount,
shared memory for data loaders, a chosen user; the engine's refusals of a GPU request are raised as
GpuRequestRefused (pipeline/ words them for the host). The engine is the SDK's client, or `envgen run`'s own over
a Unix socket (envgen.docker.socket_engine), which takes the same keywords and gives containers the same methods."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from envgen.docker.gpu_errors import gpu_refusal
from envgen.docker.socket_engine import ApiError, SocketContainer, SocketEngine, api_errors
from envgen.errors import EngineError, InputError
from envgen.layout import PREFLIGHT_SWITCH, WORKSPACE
from envgen.vocabulary import DEFAULT_SHM_SIZE

if TYPE_CHECKING:
    from envgen.docker.socket_engine import Engine

Gpus = Literal["all", "none"] | int
WORKDIR_IN_CONTAINER = WORKSPACE


class RunResult(NamedTuple):
    exit_code: int
    output: str
    timed_out: bool = False  # killed after ``timeout_s``


def current_user() -> str:
    """``"uid:gid"`` of this process, for files written to a mounted working directory."""
    return f"{os.getuid()}:{os.getgid()}"


def device_requests(gpus: Gpus, cdi_devices: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The API's form of ``--gpus`` (HostConfig.DeviceRequests; the SDK's DeviceRequest is this dict). Through the
    NVIDIA runtime: ``all`` -> count -1, N -> count N, with the ``gpu`` capability (what `docker run --gpus` sends).
    By CDI, when ``cdi_devices`` names the devices (``nvidia.com/gpu=all``, ``nvidia.com/gpu=0``): one request of
    the ``cdi`` driver with those IDs (what `docker run --device nvidia.com/gpu=all` sends). ``none`` -> none."""
    if gpus == "none":
        return []
    if not (gpus == "all" or isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0):
        raise InputError(f"--gpus {gpus!r}: expected all, none or a positive number")
    if cdi_devices:
        return [{"Driver": "cdi", "Count": 0, "DeviceIDs": list(cdi_devices), "Capabilities": [], "Options": {}}]
    return [{"Driver": "", "Count": -1 if gpus == "all" else gpus, "DeviceIDs": [], "Capabilities": [["gpu"]],
             "Options": {}}]


def run_container(
    client: Engine,
    image: str,
    command: str | Sequence[str] | None = None,
    *,
    gpus: Gpus = "none",
    cdi_devices: Sequence[str] = (),
    restore_env: Mapping[str, str] | None = None,
    workdir: Path | None = None,
    user: str | None = None,
    shm_size: str = DEFAULT_SHM_SIZE,
    env: Mapping[str, str] | None = None,
    remove: bool = True,
    on_output: Callable[[str], None] | None = None,
    timeout_s: float | None = None,
    files: tuple[str, bytes] | None = None,
    preflight: bool = False,
    platform: str | None = None,
) -> RunResult:
    """Run ``command`` in ``image`` to completion; returns its exit code and combined output.

    ``workdir`` (host directory) is mounted read-write at /workspace and made the working directory;
    ``user`` is ``"uid:gid"`` (default: the image's user); ``on_output`` receives output lines live;
    ``cdi_devices`` asks for the GPUs by CDI instead of through the NVIDIA runtime (see device_requests);
    ``restore_env`` are variables set again after the engine's device edits (a CDI spec's env replaces the
    image's): the image's entrypoint then runs under ``/usr/bin/env NAME=value ...``. ``files``: (DEST, a tar)
    unpacked into the container before it starts (never committed). ``preflight``: the image's own GPU and driver
    check before the command; off for envgen's own runs (probe, freeze, readers), on for `envgen run`. ``platform``:
    the image's, when not the host's (QEMU). Raises GpuRequestRefused when the engine refuses the GPU request,
    InputError for an unknown image.
    """
    refusals = api_errors(client)
    kwargs = _create_kwargs(gpus, cdi_devices, workdir, user, shm_size, env)
    _mark(client, kwargs, remove, preflight, platform)
    if restore_env:
        command = _wrap_env(client, image, command, restore_env, kwargs)
    container = _create(client, image, command, kwargs, cdi_devices)
    try:
        if files is not None:
            container.put_archive(*files)
        return _start(container, image, on_output, timeout_s, refusals)
    finally:
        if remove:
            with contextlib.suppress(*refusals):
                container.remove(force=True)


def _start(container: Any, image: str, on_output: Callable[[str], None] | None, timeout_s: float | None,
           refusals: tuple[type[Exception], ...]) -> RunResult:
    """Start ``container`` and follow it to its end. Over the socket, with ``on_output``, its output is attached to
    before it starts (`docker run`'s way; the SDK's path follows the log)."""
    attached = container.attach() if on_output is not None and isinstance(container, SocketContainer) else None
    try:
        try:
            container.start()
        except refusals as exc:
            raise _refused(image, exc) from None
        return _wait(container, on_output, timeout_s, refusals, attached)
    finally:
        if attached is not None:
            attached.close()


def _mark(client: Engine, kwargs: dict[str, Any], remove: bool, preflight: bool, platform: str | None) -> None:
    """The preflight switched off unless asked for; the image's platform when given (one of a manifest list's);
    envgen's own container (``remove``: the probe's) labelled with its owner, a dead owner's ones removed first."""
    if platform is not None:
        kwargs["platform"] = platform
    if not preflight:
        kwargs["environment"].setdefault(PREFLIGHT_SWITCH, "0")
    if remove:
        from envgen.docker.owner import owner_labels, remove_orphans

        remove_orphans(client)
        kwargs["labels"] = owner_labels()


def _create_kwargs(gpus: Gpus, cdi_devices: Sequence[str], workdir: Path | None, user: str | None, shm_size: str,
                   env: Mapping[str, str] | None) -> dict[str, Any]:
    """The SDK's keywords for a container: shared memory, environment, GPUs, the working directory's mount, user."""
    kwargs: dict[str, Any] = {"shm_size": shm_size, "environment": dict(env or {}),
                              "device_requests": device_requests(gpus, cdi_devices)}
    if workdir is not None:
        host_dir = Path(workdir).resolve()
        if not host_dir.is_dir():
            raise InputError(f"--workdir {workdir}: not a directory")
        kwargs["volumes"] = {str(host_dir): {"bind": WORKDIR_IN_CONTAINER, "mode": "rw"}}
        kwargs["working_dir"] = WORKDIR_IN_CONTAINER
    if user:
        kwargs["user"] = user
    return kwargs


def _create(client: Engine, image: str, command: str | Sequence[str] | None, kwargs: dict[str, Any],
            cdi_devices: Sequence[str]) -> Any:
    if isinstance(client, SocketEngine):
        return _create_on_socket(client, image, command, kwargs, cdi_devices)
    from docker.errors import APIError, ImageNotFound

    try:
        if kwargs["device_requests"] and _on_podman(client):  # its compat API drops them
            from envgen.docker.podman_run import create_container

            return create_container(client, image, command, kwargs, cdi_devices)
        return client.containers.create(image, command, detach=True, **kwargs)
    except ImageNotFound:
        raise _no_image(image) from None
    except APIError as exc:
        raise _refused(image, exc) from None


def _create_on_socket(engine: SocketEngine, image: str, command: str | Sequence[str] | None,
                      kwargs: dict[str, Any], cdi_devices: Sequence[str]) -> SocketContainer:
    """``_create`` over the engine's socket: the same requests, the same errors."""
    try:
        if kwargs["device_requests"] and _on_podman(engine):  # its compat API drops them
            from envgen.docker.podman_run import created_id

            return SocketContainer(engine, created_id(image, command, kwargs, cdi_devices))
        return engine.create(image, command, kwargs)
    except ApiError as exc:
        raise (_no_image(image) if exc.image_missing else _refused(image, exc)) from None


def _on_podman(client: Engine) -> bool:
    from envgen.docker.engine import engine_info

    return engine_info(client).kind == "podman"


def _no_image(image: str) -> InputError:
    return InputError(f"no image {image} on this engine", fix="build it (envgen build) or pull it")


def _wait(container: Any, on_output: Callable[[str], None] | None, timeout_s: float | None,
          refusals: tuple[type[Exception], ...], attached: Iterable[bytes] | None = None) -> RunResult:
    """Follow a started container to its end (killed after ``timeout_s``), its output streamed to ``on_output``
    (from ``attached``, its output attached to before its start, else its followed log)."""
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        with contextlib.suppress(*refusals):
            container.kill()

    timer = threading.Timer(timeout_s, kill) if timeout_s else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        streamed = _follow(container, on_output, attached) if on_output is not None else None
        status = container.wait()
    finally:
        if timer is not None:
            timer.cancel()
    # the log once: what the stream read, else fetched now the container has ended
    output = (streamed if streamed is not None else container.logs(stdout=True, stderr=True)).decode("utf-8", "replace")
    return RunResult(int(status.get("StatusCode", -1)), output, killed.is_set())


def _follow(container: Any, on_output: Callable[[str], None], attached: Iterable[bytes] | None = None) -> bytes:
    """The container's output (``attached``, else its log followed) to its end, each complete line handed to
    ``on_output`` as it comes (a line the engine splits across messages, such as one over the json-file driver's
    16 KiB, or a UTF-8 character cut between two, is handed on whole); the bytes read, which are the whole output: it
    is not fetched again."""
    seen, start = bytearray(), 0  # start: where the line not handed on yet begins
    for chunk in attached if attached is not None else container.logs(stream=True, follow=True):
        seen += chunk
        end = seen.rfind(b"\n") + 1
        if end > start:
            _hand_on(seen[start:end], on_output)
            start = end
    _hand_on(seen[start:], on_output)  # a last line without its newline
    return bytes(seen)


def _hand_on(data: bytes | bytearray, on_output: Callable[[str], None]) -> None:
    for line in bytes(data).decode("utf-8", "replace").splitlines():
        on_output(line)


def _wrap_env(client: Engine, image: str, command: str | Sequence[str] | None, restore: Mapping[str, str],
              kwargs: dict[str, Any]) -> list[str]:
    """``/usr/bin/env NAME=value ...`` in front of the image's entrypoint; the command given, else the
    image's own (a new entrypoint clears the image's CMD)."""
    from envgen.docker.images import image_attrs

    attrs = image_attrs(client, image)
    if attrs is None:
        raise _no_image(image)
    config = attrs.get("Config") or {}
    kwargs["entrypoint"] = ["/usr/bin/env", *(f"{k}={v}" for k, v in sorted(restore.items())),
                            *(config.get("Entrypoint") or [])]
    if command is None:
        return list(config.get("Cmd") or [])
    return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)


def _refused(image: str, exc: Exception) -> EngineError:
    """The engine's refusal to create or start a container: a GPU refusal (typed, envgen.docker.gpu_errors),
    else the engine's own words (the SDK's text for them, over the socket as through the SDK)."""
    said = str(getattr(exc, "text", exc))
    refusal = gpu_refusal(said)
    if refusal is not None:
        return refusal
    return EngineError(f"could not start a container from {image}: {' '.join(said.split())}")
