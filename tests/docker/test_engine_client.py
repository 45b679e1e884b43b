"""connect(): a live engine answers; a dead socket gives DockerUnavailable in one sentence."""

from __future__ import annotations

import pytest

from envgen.docker import connect
from envgen.docker.client import explain_failure
from envgen.errors import DockerUnavailable


def test_connect_to_the_running_engine(docker_client: object) -> None:
    client = connect()
    try:
        assert client.ping() is True
    finally:
        client.close()


def test_dead_socket_gives_one_sentence() -> None:
    with pytest.raises(DockerUnavailable) as info:
        connect("unix:///nonexistent.sock")
    line = info.value.one_line()
    assert "\n" not in line
    assert "/nonexistent.sock" in line
    assert "not running" in line
    assert "systemctl start docker" in line and "scripts/host-setup" in line
    assert info.value.exit_code == 4
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_refused_tcp_engine() -> None:
    with pytest.raises(DockerUnavailable, match="stopped"):
        connect("tcp://127.0.0.1:1")


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        ("('Connection aborted.', PermissionError(13, 'Permission denied'))", "Permission denied"),
        ("('Connection aborted.', ConnectionRefusedError(111, 'Connection refused'))", "stopped"),
    ],
)
def test_causes_are_named(tmp_path: object, detail: str, expected: str) -> None:
    # An existing path stands in for the socket so the cause comes from the message.
    err = explain_failure("unix:///dev/null", detail)
    assert expected in err.one_line()
    assert "\n" not in err.one_line()
