"""The Engine API over the engine's Unix socket with the standard library, for the calls `envgen run` makes: ping,
version and info, image inspect, and a container's list, create, archive put, start, logs (followed), wait, kill and
remove. Nothing else: builds, pushes, pulls, a tcp://, ssh:// or TLS engine go through the Docker SDK
(``envgen.docker.client``), and so does `envgen run` where the engine's address is not a Unix socket.

Why it exists: importing the SDK (``docker`` -> requests -> urllib3) was most of what `envgen run PROFILE` still
spent over `envgen check PROFILE` plus the engine's own `docker run --rm IMAGE true` (bench/bench_run.py, -X
importtime, 2026-12-04: the SDK 60 ms of a +0.013 s median overhead, +0.045 s by the fastest runs).

The HTTP is the standard library's http.client over the socket, every request on a connection of its own
(``Connection: close``). Its import (email, ssl) is 17 of this module's 23 ms (-X importtime, same day, load ~1.7);
a run is still 0.09 s under check plus the engine with it (docs/benchmarks.md), and HTTP/1.1's framing is not code
to keep of our own.

It sends what the SDK sends for the same keywords (``create_body``: the SDK's container config and host config, as
docker-py 7 builds them from ``containers.create``'s keywords), unversioned paths (the engine's own API version, what
the SDK's version negotiation arrives at), and raises what the SDK path raises: DockerUnavailable in
``explain_failure``'s sentences when the socket does not answer, ``ApiError`` (an EngineError, in the SDK's words
"500 Server Error: Internal Server Error (\"...\")") when the engine refuses a request. The logs of a container
created without a TTY (every container envgen creates) come in the API's multiplexed frames: an 8-byte header
(stream, 3 zero bytes, the payload's length as a big-endian uint32), then the payload.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import quote, urlencode

from envgen.docker.client import engine_url, explain_failure, socket_path
from envgen.errors import EngineError

if TYPE_CHECKING:
    from docker import DockerClient

    Engine: TypeAlias = "DockerClient | SocketEngine"

API_TIMEOUT_S = 300.0  # what envgen.docker.client.connect gives the SDK
# the SDK's byte units for shm_size (docker.utils.parse_bytes)
_UNITS = {"b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
# a 404's words that mean the image is missing (the SDK's ImageNotFound), not another object
_NO_IMAGE = ("no such image", "not found: does not exist or no pull access", "repository does not exist",
             "was found but does not match the specified platform")


class ApiError(EngineError):
    """The engine answered an error status. ``text``: the SDK's words for it (without the URL), which the GPU
    refusals and the run's messages read; ``explanation``: the engine's own message."""

    def __init__(self, status: int, reason: str, explanation: str) -> None:
        self.status, self.explanation = status, explanation
        self.text = f"{status} {'Client' if status < 500 else 'Server'} Error: {reason}"
        if explanation:
            self.text += f' ("{explanation}")'
        super().__init__(f"the Docker engine refused the request: {' '.join(self.text.split())}")

    @property
    def image_missing(self) -> bool:
        return self.status == 404 and any(words in self.explanation.lower() for words in _NO_IMAGE)


class _UnixConnection(http.client.HTTPConnection):
    """http.client's connection, to a Unix socket."""

    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class _Reply:
    """One answer (http.client's, which reads a body by length, by chunks or to the end), with its connection: one
    request per connection, closed with the answer."""

    def __init__(self, connection: _UnixConnection, response: http.client.HTTPResponse) -> None:
        self._connection, self._response = connection, response
        self.status, self.reason = response.status, response.reason
        self.headers = {name.lower(): value for name, value in response.getheaders()}

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes of the body (all of it for -1), fewer only where it ends."""
        try:
            return self._response.read() if size < 0 else self._response.read(size)
        except http.client.IncompleteRead as exc:
            raise ConnectionError("the engine closed the connection in the middle of an answer") from exc

    def close(self) -> None:
        self._response.close()
        self._connection.close()


def _error(status: int, reason: str, body: bytes) -> ApiError:
    try:
        said = json.loads(body).get("message", "")
    except (ValueError, AttributeError):
        said = body.decode("utf-8", "replace").strip()
    return ApiError(status, reason, str(said))


class SocketEngine:
    """The engine at ``url`` (``unix://PATH``), one connection per request (the kill timer asks from its own
    thread while the log is followed)."""

    def __init__(self, url: str, path: str, timeout: float = API_TIMEOUT_S) -> None:
        self.url, self.path, self.timeout = url, path, timeout

    def _open(self, method: str, path: str, query: Mapping[str, Any] | None = None, body: bytes | None = None,
              content_type: str = "application/json", timeout: float | None = API_TIMEOUT_S) -> _Reply:
        """The engine's answer to one request, its status checked (ApiError), for the caller to read and close."""
        headers = {"User-Agent": "envgen", "Connection": "close"}
        if body is not None:
            headers["Content-Type"] = content_type
        connection = _UnixConnection(self.path, timeout)
        try:
            connection.request(method, f"{path}{'?' + urlencode(query) if query else ''}", body, headers)
            reply = _Reply(connection, connection.getresponse())
        except (OSError, ValueError, http.client.HTTPException) as exc:
            connection.close()
            raise explain_failure(self.url, str(exc)) from None
        if reply.status >= 300:  # the Engine API redirects only a path it cleans (a ref with "//"): not an answer
            try:
                raise _error(reply.status, reply.reason, reply.read())
            finally:
                reply.close()
        return reply

    def call(self, method: str, path: str, query: Mapping[str, Any] | None = None, body: Any = None, *,
             raw: bytes | None = None, content_type: str = "application/json", timeout: float | None = API_TIMEOUT_S,
             ) -> Any:
        """One request; the answer's JSON (None for an empty answer). ``body`` is sent as JSON, ``raw`` as is."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        reply = self._open(method, path, query, data, content_type, timeout)
        try:
            answer = reply.read()
        except (OSError, ValueError) as exc:
            raise explain_failure(self.url, str(exc)) from None
        finally:
            reply.close()
        return json.loads(answer) if answer.strip() and "json" in reply.headers.get("content-type", "") else None

    def ping(self) -> None:
        """DockerUnavailable, in explain_failure's sentences, when the engine does not answer OK."""
        try:
            self.call("GET", "/_ping", timeout=self.timeout)
        except ApiError as exc:
            raise explain_failure(self.url, exc.text) from None

    def version(self) -> dict[str, Any]:
        return dict(self.call("GET", "/version") or {})

    def info(self) -> dict[str, Any]:
        return dict(self.call("GET", "/info") or {})

    def inspect_image(self, ref: str) -> dict[str, Any] | None:
        """The engine's inspect answer for ``ref``; None for no such image (404) or a ref no image can have (400; 301:
        a ref beginning with "/", such as a profile's path, which the engine's router redirects to its cleaned
        path; the SDK follows that redirect to a 404)."""
        try:
            return dict(self.call("GET", f"/images/{quote(ref, safe='/:')}/json") or {})
        except ApiError as exc:
            if exc.status in (301, 400, 404):
                return None
            raise

    def containers(self, filters: Mapping[str, str]) -> list[dict[str, Any]]:
        """Containers in any state matching ``filters`` (each one value), as the list endpoint gives them."""
        found = self.call("GET", "/containers/json",
                          {"all": 1, "filters": json.dumps({k: [v] for k, v in filters.items()})})
        return list(found or [])

    def create(self, image: str, command: str | Sequence[str] | None, kwargs: Mapping[str, Any]) -> SocketContainer:
        """A container made from the SDK's ``containers.create`` keywords that envgen.docker.run builds."""
        query = {"platform": kwargs["platform"]} if kwargs.get("platform") else None
        made = self.call("POST", "/containers/create", query, create_body(image, command, kwargs))
        return SocketContainer(self, str(made["Id"]))

    def logs(self, container: str, *, follow: bool) -> Iterator[bytes]:
        """The payloads of a TTY-less container's multiplexed log frames, stdout and stderr as they come."""
        query = {"stdout": 1, "stderr": 1, "follow": int(follow)}
        return iter(Frames(self, self._open("GET", f"/containers/{container}/logs", query, timeout=None)))

    def attach(self, container: str) -> Frames:
        """The output of a container not started yet, from its start to its end (`docker run`'s way: a followed log
        ends when the container stops, and Docker 20.10 had not yet logged a last line without its newline then:
        lost in 5 of 10 runs here)."""
        query = {"stream": 1, "stdout": 1, "stderr": 1}
        return Frames(self, self._open("POST", f"/containers/{container}/attach", query, timeout=None))


class Frames:
    """A stream of multiplexed frames (a followed log, an attached container), read as payloads; open until read
    to its end or closed."""

    def __init__(self, engine: SocketEngine, reply: _Reply) -> None:
        self._url, self._reply = engine.url, reply

    def __iter__(self) -> Iterator[bytes]:
        try:
            while len(header := self._reply.read(8)) == 8:
                size = int.from_bytes(header[4:], "big")
                payload = self._reply.read(size)
                if payload:
                    yield payload
                if len(payload) < size:
                    return
        except (OSError, ValueError) as exc:
            raise explain_failure(self._url, str(exc)) from None
        finally:
            self.close()

    def close(self) -> None:
        self._reply.close()


class SocketContainer:
    """A container on a SocketEngine, with the SDK Container's methods that envgen.docker.run calls."""

    def __init__(self, engine: SocketEngine, container_id: str) -> None:
        self.engine, self.id = engine, container_id

    def put_archive(self, path: str, data: bytes) -> bool:
        self.engine.call("PUT", f"/containers/{self.id}/archive", {"path": path}, raw=data,
                         content_type="application/x-tar")
        return True

    def attach(self) -> Frames:
        return self.engine.attach(self.id)

    def start(self) -> None:
        self.engine.call("POST", f"/containers/{self.id}/start")

    def kill(self) -> None:
        self.engine.call("POST", f"/containers/{self.id}/kill")

    def wait(self) -> dict[str, Any]:
        return dict(self.engine.call("POST", f"/containers/{self.id}/wait", timeout=None) or {})

    def remove(self, force: bool = False) -> None:
        self.engine.call("DELETE", f"/containers/{self.id}", {"force": int(force)})

    def logs(self, *, stdout: bool = True, stderr: bool = True, stream: bool = False,
             follow: bool = False) -> Iterator[bytes] | bytes:
        """The SDK's ``logs`` for both streams: an iterator of payloads when ``stream``, else the whole log."""
        if not (stdout and stderr):
            raise ValueError("SocketContainer.logs reads stdout and stderr together")
        chunks = self.engine.logs(self.id, follow=follow)
        return chunks if stream else b"".join(chunks)


def _bytes(value: str | int) -> int:
    """``"2g"`` -> 2 GiB, as the SDK reads shm_size (b, k, m, g; a trailing b after a unit is dropped)."""
    if isinstance(value, int):
        return value
    text = value[:-1] if value[-2:-1].isalpha() and value[-1:] in "bB" else value
    unit = text[-1:].lower()
    if unit.isdigit():
        return int(text)
    if unit not in _UNITS:
        raise EngineError(f"shm_size {value!r}: expected a number of bytes with b, k, m or g")
    return int(float(text[:-1]) * _UNITS[unit])


_CREATE_KEYS = {"shm_size", "environment", "device_requests", "volumes", "working_dir", "user", "labels",
                "entrypoint", "platform"}


def create_body(image: str, command: str | Sequence[str] | None, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON the SDK posts to /containers/create for ``containers.create(image, command, detach=True,
    **kwargs)`` with the keywords envgen.docker.run builds (its None values left out, as the SDK does)."""
    unknown = set(kwargs) - _CREATE_KEYS
    if unknown:
        raise TypeError(f"create_body: keywords it does not translate: {sorted(unknown)}")
    if isinstance(command, str):
        import shlex

        command = shlex.split(command)  # as the SDK splits a string command
    host: dict[str, Any] = {"NetworkMode": "default"}
    if kwargs.get("shm_size") is not None:
        host["ShmSize"] = _bytes(kwargs["shm_size"])
    volumes = kwargs.get("volumes") or {}
    if volumes:
        host["Binds"] = [f"{src}:{bind['bind']}:{bind.get('mode', 'rw')}" for src, bind in volumes.items()]
    if kwargs.get("device_requests") is not None:
        host["DeviceRequests"] = [dict(request) for request in kwargs["device_requests"]]
    body: dict[str, Any] = {
        "Tty": False, "OpenStdin": False, "StdinOnce": False, "AttachStdin": False, "AttachStdout": False,
        "AttachStderr": False, "NetworkDisabled": False, "Image": image, "HostConfig": host,
        "Env": [f"{key}={value}" for key, value in (kwargs.get("environment") or {}).items()],
        "Cmd": list(command) if command is not None else None,
        "Volumes": {bind["bind"]: {} for bind in volumes.values()} or None,
        "User": str(kwargs["user"]) if kwargs.get("user") is not None else None,
        "Entrypoint": list(kwargs["entrypoint"]) if kwargs.get("entrypoint") is not None else None,
        "WorkingDir": kwargs.get("working_dir"), "Labels": kwargs.get("labels"),
    }
    return {key: value for key, value in body.items() if value is not None}


def open_engine(base_url: str | None = None) -> Engine:
    """The engine `envgen run` talks to, pinged: this client where the address (``base_url``, else
    ``DOCKER_HOST``, else the default) is a Unix socket, the SDK's (envgen.docker.client.connect) otherwise."""
    url = engine_url(base_url)
    path = socket_path(url)
    if path is None:
        from envgen.docker.client import connect

        return connect(url)
    engine = SocketEngine(url, path)
    engine.ping()
    return engine


def sdk(client: Engine) -> DockerClient:
    """The SDK's client for the same engine, for the steps this client does not cover (a smoke run's image reads)."""
    if isinstance(client, SocketEngine):
        from envgen.docker.client import connect

        return connect(client.url)
    return client


def api_errors(client: Engine) -> tuple[type[Exception], ...]:
    """The exceptions ``client``'s engine refusals arrive as: ApiError here, the SDK's APIError there."""
    if isinstance(client, SocketEngine):
        return (ApiError,)
    from docker.errors import APIError

    return (APIError,)
