"""`envgen run`'s own client over the engine's Unix socket (envgen.docker.socket_engine) against the real engine:
the container it creates is the one the SDK creates for the same keywords, its output reaches ``on_output`` in whole
lines, and its errors are the SDK path's (DockerUnavailable's sentences, InputError, EngineError's words)."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from envgen.docker import run_container
from envgen.docker.client import connect, engine_url
from envgen.docker.run import _wait
from envgen.docker.socket_engine import ApiError, SocketContainer, SocketEngine, open_engine
from envgen.errors import DockerUnavailable, EngineError, InputError

if TYPE_CHECKING:
    from docker import DockerClient

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def engine(docker_client: DockerClient) -> SocketEngine:
    """The engine under test through the socket client (the SDK's docker_client says the engine is up)."""
    opened = open_engine()
    if not isinstance(opened, SocketEngine):
        pytest.skip(f"the engine's address {engine_url()} is not a Unix socket: run uses the SDK there")
    return opened


def _left(engine: SocketEngine, marker: str) -> list[str]:
    """Containers (any state) whose command mentions ``marker`` (other work shares the engine)."""
    return [row["Id"] for row in engine.call("GET", "/containers/json", {"all": 1}) if marker in row["Command"]]


def test_output_exit_code_and_removal(engine: SocketEngine, base_image: str) -> None:
    marker = f"sock-{uuid.uuid4().hex}"
    lines: list[str] = []
    result = run_container(engine, base_image, ["sh", "-c", f"echo out; echo err >&2; exit 7 # {marker}"],
                           on_output=lines.append)
    assert result.exit_code == 7 and not result.timed_out
    assert sorted(result.output.splitlines(keepends=True)) == ["err\n", "out\n"]
    assert sorted(lines) == ["err", "out"]
    assert run_container(engine, base_image, ["sh", "-c", f"echo quiet # {marker}"]).output == "quiet\n"
    assert _left(engine, marker) == []


def test_a_long_line_comes_whole(engine: SocketEngine, base_image: str) -> None:
    """The json-file driver cuts a line at 16 KiB into two log messages, two frames here: handed on as one line."""
    half = "a" * 16000
    lines: list[str] = []
    result = run_container(engine, base_image, ["sh", "-c", "s=$(head -c 16000 /dev/zero | tr '\\0' a); "
                                                "printf '%s\\303\\251%s\\nend\\n' \"$s\" \"$s\""],
                           on_output=lines.append)
    assert result.exit_code == 0, result.output[-300:]
    assert lines == [f"{half}\u00e9{half}", "end"], [len(line) for line in lines]
    assert result.output == f"{half}\u00e9{half}\nend\n"


def test_a_character_cut_between_frames_comes_whole(engine: SocketEngine, base_image: str) -> None:
    """With the ``local`` log driver (bytes kept as written) the 16 KiB cut falls inside a two-byte character: its
    first byte ends one frame, its second starts the next; the line is handed on whole, the character in it. (The
    line is the log's last: Docker 20.10's local driver drops the newline of a cut line's last part; 26 keeps it.)"""
    from envgen.docker.engine import engine_info

    if engine_info(engine).kind == "podman":
        pytest.skip("Podman has no `local` log driver (k8s-file, journald): this cut is Docker's; the json-file "
                    "cut of a long line is test_a_long_line_comes_whole")
    script = "s=$(head -c 16383 /dev/zero | tr '\\0' a); printf 'first\\n%s\\303\\251b\\n' \"$s\""
    body = {"Image": base_image, "Cmd": ["sh", "-c", script], "HostConfig": {"LogConfig": {"Type": "local"}}}
    container = SocketContainer(engine, engine.call("POST", "/containers/create", body=body)["Id"])
    try:
        container.start()
        frames = list(engine.logs(container.id, follow=True))
        assert frames[-2].endswith(b"a\xc3") and frames[-1].rstrip(b"\n") == b"\xa9b", [f[-4:] for f in frames]
        lines: list[str] = []
        result = _wait(container, lines.append, None, (ApiError,))
    finally:
        container.remove(force=True)
    assert result.exit_code == 0
    assert lines == ["first", "a" * 16383 + "\u00e9b"], [line[-3:] for line in lines]


def test_every_line_comes_from_the_attached_output(engine: SocketEngine, base_image: str) -> None:
    """`envgen run` attaches to the container before starting it (as `docker run` does): a character written in
    two pieces (two frames) comes whole, and a last line without its newline comes at all, every time (a followed log
    ends when the container stops, and Docker 20.10 had not logged that line yet in 5 of 10 runs here)."""
    script = "printf 'first\\n\\303'; sleep 0.2; printf '\\251b\\n'; sleep 0.2; printf last"
    for _ in range(3):
        lines: list[str] = []
        result = run_container(engine, base_image, ["sh", "-c", script], on_output=lines.append)
        assert (result.exit_code, lines, result.output) == (0, ["first", "\u00e9b", "last"], "first\n\u00e9b\nlast")


def test_timeout_kills_the_container(engine: SocketEngine, base_image: str) -> None:
    marker = f"sock-timeout-{uuid.uuid4().hex}"
    result = run_container(engine, base_image, ["sh", "-c", f"echo {marker}; sleep 60"], timeout_s=2,
                           on_output=lambda _line: None)
    assert result.timed_out and result.exit_code != 0 and marker in result.output
    assert _left(engine, marker) == []


def test_files_are_put_before_start(engine: SocketEngine, base_image: str, tmp_path: Path) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("envgen-in/hello.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"hi\n"))
    result = run_container(engine, base_image, ["cat", "/tmp/envgen-in/hello.txt"], files=("/tmp", data.getvalue()))
    assert (result.exit_code, result.output) == (0, "hi\n")


def test_unknown_image_is_input_error(engine: SocketEngine) -> None:
    with pytest.raises(InputError, match="no image envgen-test/nothing:here on this engine"):
        run_container(engine, "envgen-test/nothing:here", ["true"])


def test_a_profile_path_is_no_image_on_either_client(engine: SocketEngine, docker_client: DockerClient,
                                                     tmp_path: Path) -> None:
    """`envgen run /path/to/profile.yaml` asks the engine first whether the path names an image: the engine's router
    answers a ref beginning with "/" with a redirect to its cleaned path (301), which the SDK follows to a 404. Seen
    on the H200 (Docker 26.1.5, 2026-12-04): the socket client took the redirect's empty answer for an image and the
    run ended in a traceback (KeyError 'Id')."""
    from envgen.docker.images import inspect_image

    path = str(tmp_path / "adopt" / "h200-adopted.yaml")
    assert engine.inspect_image(path) is None
    assert inspect_image(engine, path) is None and inspect_image(docker_client, path) is None


def _refusal(client: Any, image: str, marker: str) -> str:
    with pytest.raises(EngineError) as refused:
        run_container(client, image, [f"/no/such/{marker}"])
    return refused.value.one_line()


def test_a_refused_start_is_worded_as_the_sdk_words_it(engine: SocketEngine, docker_client: DockerClient,
                                                       base_image: str) -> None:
    """The engine refuses to start a command that is not there: the same one line as the SDK path, but the SDK's
    URL (``for http+docker://localhost/v1.NN/containers/ID/start``), which names no fact the user needs."""
    marker = f"sock-refused-{uuid.uuid4().hex}"
    ours, sdks = _refusal(engine, base_image, marker), _refusal(docker_client, base_image, marker)
    assert ours.startswith(f"could not start a container from {base_image}: ") and marker in ours, ours
    assert ours == re.sub(r" for http\+docker://\S+:", ":", sdks), (ours, sdks)
    assert _left(engine, marker) == []


def test_a_refused_gpu_request_is_the_sdks_typed_refusal(engine: SocketEngine, docker_client: DockerClient,
                                                          base_image: str) -> None:
    """No NVIDIA runtime here: both clients raise GpuRequestRefused with the same reason and the engine's words,
    which pipeline/ turns into the doctor's sentences (envgen.host.engine_errors)."""
    from envgen.errors import GpuRequestRefused

    refusals = []
    for client in (engine, docker_client):
        with pytest.raises(GpuRequestRefused) as refused:
            run_container(client, base_image, ["true"], gpus="all")
        refusals.append(refused.value)
    ours, sdks = refusals
    assert ours.reason == sdks.reason == "no-runtime" and ours.exit_code == EngineError.exit_code
    assert ours.engine_message == re.sub(r" for http\+docker://\S+:", ":", sdks.engine_message), (ours, sdks)


def _stopped_socket(tmp_path: Path) -> str:
    """A socket file nobody listens on (an engine that stopped without removing it)."""
    path = str(tmp_path / "stopped.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(path)
    return path


def test_an_engine_that_does_not_answer_is_docker_unavailable(tmp_path: Path) -> None:
    """Its sentences are the SDK path's (envgen.docker.client.explain_failure), word for word."""
    said: list[str] = []
    for url in (f"unix://{tmp_path / 'absent.sock'}", f"unix://{_stopped_socket(tmp_path)}"):
        with pytest.raises(DockerUnavailable) as ours:
            open_engine(url)
        with pytest.raises(DockerUnavailable) as sdks:
            connect(url)
        assert ours.value.one_line() == sdks.value.one_line(), url
        said.append(ours.value.one_line())
    assert "is not running: its socket" in said[0] and "is stopped (connection refused)" in said[1], said


def test_the_container_is_the_one_the_sdk_creates(engine: SocketEngine, docker_client: DockerClient,
                                                  base_image: str, tmp_path: Path) -> None:
    """The same keywords through both clients: the engine's record of the two containers is the same (Config and
    HostConfig, but the hostname each gets), so the socket client sends what the SDK sends."""
    from envgen.docker.engine import engine_info
    from envgen.docker.run import _create, _create_kwargs, _mark

    # GPU requests too where the engine keeps them on create (Docker; Podman's go through its CLI: podman_run.py)
    docker = engine_info(engine).kind == "docker"
    for gpus, cdi in [("none", ())] + ([("all", ()), (2, ("nvidia.com/gpu=all",))] if docker else []):
        made = []
        for client in (engine, docker_client):
            kwargs = _create_kwargs(gpus, cdi, tmp_path, "1234:1234", "1g", {"GREETING": "hello"})
            _mark(client, kwargs, True, False, None)
            kwargs["entrypoint"] = ["/usr/bin/env", "A=b"]
            made.append(_create(client, base_image, "sh -c 'echo \"$GREETING\"'", kwargs, ()))
        try:
            ours, sdks = (engine.call("GET", f"/containers/{c.id}/json") for c in made)
        finally:
            for container in made:
                container.remove(force=True)
        for record in (ours, sdks):
            record["Config"].pop("Hostname")
            record["Config"]["Env"].sort()  # Podman lists it in no fixed order
        assert ours["Config"] == sdks["Config"] and ours["HostConfig"] == sdks["HostConfig"], gpus
        assert ours["HostConfig"]["ShmSize"] == 1 << 30 and ours["Config"]["Cmd"] == ["sh", "-c", 'echo "$GREETING"']
        assert bool(ours["HostConfig"].get("DeviceRequests")) == (gpus != "none"), ours["HostConfig"]


RUN_BY_IMAGE = """
import runpy, sys
sys.argv = ["envgen", "run", "--force", "--gpus", "none", sys.argv[1], "--", "echo", "ran"]
try:
    runpy.run_module("envgen", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print("SDK", sorted(m for m in sys.modules if m.split(".")[0] in ("docker", "requests", "urllib3")), code)
"""


def test_a_run_imports_no_docker_sdk(engine: SocketEngine, base_image: str, tmp_path: Path) -> None:
    """`envgen run --force --gpus none IMAGE -- echo ran` in a process of its own (Typer's path: its exit is judged
    without importing the SDK): the container runs, and no module of the SDK (docker, requests, urllib3) is
    imported. A run by profile on the plain path: tests/pipeline/test_pipeline_minimal.py."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", RUN_BY_IMAGE, base_image], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120, check=False)
    assert done.stdout.splitlines()[-2:] == ["ran", "SDK [] 0"], done.stdout + done.stderr
