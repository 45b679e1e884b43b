"""run_container(): output and exit code, working directory, user, shared memory; the engine's GPU refusals
(typed engine errors) and their translation into host errors where the pipeline starts a container."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import run_container
from envgen.docker.engine import engine_info
from envgen.docker.run import current_user, device_requests
from envgen.errors import EngineError, GpuRequestRefused, HostIncompatible, InputError
from envgen.host.engine_errors import host_incompatible
from envgen.host.gate import translate_engine_error
from envgen.host.route import GpuRoute
from envgen.pipeline.gpus import start_container

if TYPE_CHECKING:
    from docker import DockerClient


def _containers(client: DockerClient, marker: str) -> list[str]:
    """Containers (any state) whose command mentions ``marker`` (other work may share the engine)."""
    return [c["Id"] for c in client.api.containers(all=True) if marker in (c.get("Command") or "")]


def test_output_and_exit_code(docker_client: DockerClient, base_image: str) -> None:
    marker = f"run-{uuid.uuid4().hex}"
    lines: list[str] = []
    result = run_container(docker_client, base_image, ["sh", "-c", f"echo out; echo err >&2; exit 7 # {marker}"],
                           on_output=lines.append)
    assert result.exit_code == 7
    assert sorted(result.output.split()) == ["err", "out"]  # two streams: order not guaranteed
    assert sorted(lines) == ["err", "out"]
    code, output, _timed_out = result
    assert (code, sorted(output.splitlines(keepends=True))) == (7, ["err\n", "out\n"])
    assert _containers(docker_client, marker) == []  # removed


def test_followed_output_is_read_once_and_handed_on_in_whole_lines(docker_client: DockerClient, base_image: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A followed run reads the log once (the stream; #41: `_wait` fetched the whole log again after it), and a
    line the engine splits across log messages (the json-file driver cuts at 16 KiB) reaches ``on_output`` whole, as
    it is in the result. (A character the cut falls inside is lost by the engine itself: json-file stores each part
    as JSON text, a U+FFFD for each of its bytes, whichever way it is read.)"""
    from docker.models.containers import Container

    calls: list[bool] = []
    real = Container.logs

    def counted(self: Container, **kwargs: object) -> object:
        calls.append(bool(kwargs.get("stream")))
        return real(self, **kwargs)

    monkeypatch.setattr(Container, "logs", counted)
    marker = f"run-{uuid.uuid4().hex}"
    half = "a" * 16000
    lines: list[str] = []
    result = run_container(docker_client, base_image, ["sh", "-c", f"s=$(head -c 16000 /dev/zero | tr '\\0' a); "
                                                       f"printf '%s\\303\\251%s\\nend\\n' \"$s\" \"$s\" # {marker}"],
                           on_output=lines.append)
    assert result.exit_code == 0, result.output[-300:]
    assert lines == [f"{half}\u00e9{half}", "end"], [len(line) for line in lines]
    assert result.output == f"{half}\u00e9{half}\nend\n"
    assert calls == [True]  # the stream alone: the log is not fetched again
    calls.clear()
    assert run_container(docker_client, base_image, ["sh", "-c", "echo quiet"]).output == "quiet\n"
    assert calls == [False]  # not followed: fetched once, when the container has ended


def test_workdir_user_shm_env(docker_client: DockerClient, base_image: str, tmp_path: Path) -> None:
    user = current_user()
    code, output, _ = run_container(
        docker_client, base_image,
        ["sh", "-c", 'pwd; id -u; id -g; df -k /dev/shm | tail -1; echo "$GREETING" > made-inside'],
        workdir=tmp_path, user=user, env={"GREETING": "hello"}, shm_size="1g",
    )
    assert code == 0, output
    pwd, uid, gid, shm = output.splitlines()[:4]
    assert pwd == "/workspace" and f"{uid}:{gid}" == user
    assert int(shm.split()[1]) == 1024 * 1024  # KiB
    made = tmp_path / "made-inside"
    assert made.read_text() == "hello\n"
    assert made.stat().st_uid == os.getuid()


def test_gpus_all_without_nvidia_runtime(docker_client: DockerClient, base_image: str) -> None:
    """The engine layer raises its own typed refusal (an engine error, exit 4); the pipeline's entry point
    raises the host error (exit 7) in the doctor's words."""
    marker = f"gpu-{uuid.uuid4().hex}"
    with pytest.raises(GpuRequestRefused) as refused:
        run_container(docker_client, base_image, ["echo", marker], gpus="all")
    assert refused.value.reason == "no-runtime" and refused.value.exit_code == EngineError.exit_code
    # Podman would start the container without GPUs: envgen refuses for it, in its own words
    said = "drops a device request" if engine_info(docker_client).kind == "podman" else "could not select device driver"
    assert said in refused.value.engine_message
    with pytest.raises(HostIncompatible) as info:
        start_container(docker_client, base_image, ["echo", marker], gpus="all", route=None)
    line = info.value.one_line()
    assert "cannot hand GPUs to containers" in line and "nvidia-container-toolkit" in line
    assert "\n" not in line
    assert _containers(docker_client, marker) == []


def test_unknown_image(docker_client: DockerClient) -> None:
    with pytest.raises(InputError, match="no image envgen-test/nothing:here"):
        run_container(docker_client, "envgen-test/nothing:here", ["true"])


def test_device_requests() -> None:
    assert device_requests("none") == []
    (all_gpus,) = device_requests("all")
    assert all_gpus["Count"] == -1 and all_gpus["Capabilities"] == [["gpu"]]
    assert device_requests(2)[0]["Count"] == 2
    for bad in (0, -1, "some", True):
        with pytest.raises(InputError):
            device_requests(bad)  # type: ignore[arg-type]


def test_cuda_requirement_is_translated() -> None:
    message = ("500 Server Error: Internal Server Error (\"failed to create shim: OCI runtime create failed: "
               "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.1, please update "
               "your driver to a newer version, or use an earlier cuda container: unknown\")")
    err = translate_engine_error(message)
    assert isinstance(err, HostIncompatible)
    assert "CUDA 12.1" in err.one_line() and "upgrade the NVIDIA driver" in err.one_line()
    assert translate_engine_error("some other error") is None


def test_timeout_kills_the_container(docker_client: DockerClient, base_image: str) -> None:
    marker = f"timeout-{uuid.uuid4().hex}"
    result = run_container(docker_client, base_image, ["sh", "-c", f"echo {marker}; sleep 60"], timeout_s=2)
    assert result.timed_out and result.exit_code != 0 and marker in result.output
    assert _containers(docker_client, marker) == []


def test_device_requests_by_cdi() -> None:
    """What `docker run --device nvidia.com/gpu=all` sends (seen on the H200's Docker 26.1.5 with docker-py)."""
    (request,) = device_requests("all", ["nvidia.com/gpu=all"])
    assert request["Driver"] == "cdi" and request["DeviceIDs"] == ["nvidia.com/gpu=all"]
    assert not request.get("Capabilities") and not request.get("Count")
    (two,) = device_requests(2, ["nvidia.com/gpu=0", "nvidia.com/gpu=1"])
    assert two["DeviceIDs"] == ["nvidia.com/gpu=0", "nvidia.com/gpu=1"]
    assert device_requests("none", ["nvidia.com/gpu=all"]) == []


def test_cdi_request_to_an_engine_without_cdi(docker_client: DockerClient, base_image: str) -> None:
    """Debian 12's Docker 20.10 reads no CDI specs: its refusal becomes one line with the fix."""
    if docker_client.info().get("CDISpecDirs") or engine_info(docker_client).kind == "podman":
        pytest.skip("this engine reads CDI specs (Docker >= 25 with CDI on, or Podman): "
                    "tests/pipeline/test_pipeline_cdi.py covers it")
    marker = f"cdi-{uuid.uuid4().hex}"
    with pytest.raises(GpuRequestRefused) as refused:
        run_container(docker_client, base_image, ["echo", marker], gpus="all", cdi_devices=["nvidia.com/gpu=all"])
    assert refused.value.reason == "no-cdi"
    worded = translate_engine_error(refused.value.engine_message)
    assert worded is not None and host_incompatible(refused.value).one_line() == worded.one_line()
    cdi = GpuRoute("cdi", ("nvidia.com/gpu=all",))
    with pytest.raises(HostIncompatible) as info:
        start_container(docker_client, base_image, ["echo", marker], gpus="all", route=cdi)
    line = info.value.one_line()
    assert "does not read CDI specs" in line and '"features": {"cdi": true}' in line
    assert _containers(docker_client, marker) == []


def test_restore_env_sets_the_images_search_paths_again(docker_client: DockerClient, base_image: str) -> None:
    """A CDI spec's env replaces the image's (seen on the H200): restore_env puts them back, for a given
    command and for the image's own CMD."""
    restore = {"PATH": "/opt/env/bin:/usr/local/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/env/lib:/drv/lib64"}
    code, output, _ = run_container(docker_client, base_image, ["sh", "-c", 'echo "$PATH|$LD_LIBRARY_PATH"'],
                                    restore_env=restore)
    assert code == 0 and output.strip() == f"{restore['PATH']}|{restore['LD_LIBRARY_PATH']}"
    code, output, _ = run_container(docker_client, base_image, "echo shell-form", restore_env=restore)
    assert code == 0 and output.strip() == "shell-form"
