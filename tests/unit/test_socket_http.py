"""The socket client's answers (envgen.docker.socket_engine._Reply: http.client's reading, and the log frames read off
it) on the three ways an answer's body ends, with boundaries the real engine does not choose on demand: a log
frame's header cut between two chunks, a chunk extension, an answer without length read to the end. The real
engine's answers: tests/docker/test_engine_socket.py. The bytes are written by hand after the engine's own (Docker
20.10's /containers/ID/logs and /_ping answers, seen here: chunked, and Content-Length)."""

from __future__ import annotations

import http.client
import socket

import pytest

from envgen.docker.socket_engine import _Reply, _UnixConnection


def _reply(answer: bytes) -> _Reply:
    ours, theirs = socket.socketpair()
    theirs.sendall(answer)
    theirs.close()
    connection = _UnixConnection("/nowhere", None)
    connection.sock = ours  # as connect() leaves it
    response = http.client.HTTPResponse(ours)
    try:
        response.begin()
    except http.client.HTTPException:
        connection.close()
        raise
    return _Reply(connection, response)


def test_a_chunked_body_read_across_chunks() -> None:
    frame = b"\x01\x00\x00\x00\x00\x00\x00\x03hi\n"
    reply = _reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/vnd.docker.raw-stream"
                   b"\r\n\r\n5\r\n" + frame[:5] + b"\r\n6;ext=1\r\n" + frame[5:] + b"\r\n0\r\nX-Trailer: 1\r\n\r\n")
    assert (reply.status, reply.reason, reply.headers["transfer-encoding"]) == (200, "OK", "chunked")
    assert reply.read(8) == frame[:8] and reply.read(3) == b"hi\n"
    assert reply.read(8) == b"" and reply.read() == b""
    reply.close()


def test_a_body_by_length_and_to_the_end() -> None:
    reply = _reply(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOKmore")
    assert reply.read() == b"OK" and reply.read(4) == b""
    reply.close()
    reply = _reply(b"HTTP/1.1 200 OK\r\n\r\nall of it")
    assert reply.read(3) == b"all" and reply.read() == b" of it"
    reply.close()
    reply = _reply(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert reply.status == 204 and reply.read() == b""
    reply.close()


def test_what_is_not_http_is_refused() -> None:
    with pytest.raises(http.client.BadStatusLine):  # SocketEngine._open words it (explain_failure)
        _reply(b"SSH-2.0-OpenSSH_9.2\r\n")
    reply = _reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort")
    with pytest.raises(ConnectionError, match="closed the connection"):
        reply.read()
    reply.close()
