"""Connect to the Docker engine through the Docker SDK, with one clear sentence when that fails.

``import docker`` happens inside :func:`connect`, never at import time of this module.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from envgen.errors import DockerUnavailable, EngineError

if TYPE_CHECKING:
    from docker import DockerClient

DEFAULT_HOST = "unix:///var/run/docker.sock"
START_FIX = "start it with `sudo systemctl start docker` or scripts/host-setup"


def as_engine_error(exc: BaseException) -> EngineError | None:
    """An error of the Docker SDK (an engine that answers oddly, a refused request) as envgen's EngineError, one
    line; None for any other exception. Where the SDK was never imported (`envgen run` over the engine's socket,
    a Typer command's exit), no exception can be one of its own: it is not imported to judge one."""
    if "docker.errors" not in sys.modules:
        return None
    from docker.errors import DockerException

    if not isinstance(exc, DockerException):
        return None
    return EngineError(f"the Docker engine refused the request: {' '.join(str(exc).split())}")


def engine_url(base_url: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The engine address that :func:`connect` uses: ``base_url``, else ``DOCKER_HOST``, else the default."""
    environ = os.environ if env is None else env
    return base_url or environ.get("DOCKER_HOST") or DEFAULT_HOST


def socket_path(url: str) -> str | None:
    """The socket's path of a ``unix://`` address; None for any other address."""
    for prefix in ("unix://", "unix:"):
        if url.startswith(prefix):
            return url[len(prefix):] or None
    return None


def explain_failure(url: str, detail: str) -> DockerUnavailable:
    """Turn an SDK/transport failure into one sentence naming the cause, with the fix."""
    import shutil  # for a failure only: `envgen run` imports this module on its way

    sock_path = socket_path(url)
    text = detail.lower()
    installed = any(shutil.which(name) for name in ("dockerd", "docker"))
    if sock_path is not None and not os.path.exists(sock_path):
        if not installed:
            return DockerUnavailable(
                f"Docker is not installed on this machine (no docker or dockerd, no socket at {sock_path}).",
                fix="install it (apt-get install docker.io) and " + START_FIX,
            )
        return DockerUnavailable(
            f"The Docker engine is not running: its socket {sock_path} does not exist.", fix=START_FIX,
        )
    if "permission denied" in text:
        return DockerUnavailable(
            f"Permission denied on the Docker engine socket {sock_path or url}.",
            fix="add your user to the `docker` group (sudo usermod -aG docker $USER, then log in again) "
            "or run as root",
        )
    if "connection refused" in text or "no such file" in text:
        return DockerUnavailable(
            f"The Docker engine at {url} is stopped (connection refused).", fix=START_FIX,
        )
    reason = detail.strip().splitlines()[0] if detail.strip() else "no answer"
    return DockerUnavailable(f"The Docker engine at {url} does not answer ({reason}).", fix=START_FIX)


def _probe_socket(url: str, path: str) -> None:
    """Connect to a unix socket once ourselves (closing it), so that failures are explained
    without leaving the SDK's half-open socket behind."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        try:
            sock.connect(path)
        except OSError as exc:
            raise explain_failure(url, str(exc)) from None


def connect(base_url: str | None = None, *, timeout: int = 300) -> DockerClient:
    """A client for the engine at ``base_url`` (default: ``DOCKER_HOST`` or the local socket), pinged.

    Raises DockerUnavailable with one sentence when the SDK is missing or the engine cannot be reached.
    """
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        raise DockerUnavailable(
            "The Docker SDK for Python is not installed.", fix="pip install 'docker>=7'"
        ) from None
    url = engine_url(base_url)
    path = socket_path(url)
    if path is not None:
        _probe_socket(url, path)
    client = None
    try:
        client = docker.DockerClient(base_url=url, timeout=timeout)
        client.ping()
    except (DockerException, OSError) as exc:
        if client is not None:
            client.close()
        raise explain_failure(url, str(exc)) from None
    return client
