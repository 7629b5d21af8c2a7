"""Every body bounded before it is read: `brain serve --http` answers 413 at once, and does not grow.

Real server and raw sockets: a body that declares 300 MB, and one sent
chunked without a length, on /revoke (no credential), /register, /token
and /mcp (with a token). The server's resident memory is read from /proc
(docs/protocol.md §11.5). Also the Origin check on /token and /revoke.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault, stop_pid  # noqa: F401  (fixtures)
from test_transport_http import _start_http, tokens  # noqa: F401

from brain.daemon.http.body_limits import FORM_BODY_BYTES, MCP_BODY_BYTES

pytestmark = pytest.mark.usefixtures("reaper")

DECLARED = 300 * 1024 * 1024
# a client that keeps sending after the answer: what the server would read if it did not stop
STREAMED = 24 * 1024 * 1024


@pytest.fixture
def server(daemon, tokens):
    proc, url = _start_http()
    yield proc, url, tokens
    stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


def _memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


def _head(port: int, path: str, *, length: int | None, token: str | None = None,
          content_type: str = "application/x-www-form-urlencoded") -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Type: {content_type}",
             "Accept: application/json, text/event-stream"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _send_big_body(port: int, path: str, *, declared: bool, token: str | None = None,
                   content_type: str = "application/x-www-form-urlencoded") -> tuple[int | None, float, int]:
    """(status, seconds to the answer, bytes the server took before it stopped reading)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(_head(port, path, length=DECLARED if declared else None, token=token, content_type=content_type))
    started = time.monotonic()
    sent = [0]
    answer: list[bytes] = []

    def pump() -> None:
        piece = b"a=" + b"x" * (256 * 1024 - 2)
        try:
            while sent[0] < STREAMED and not answer:
                s.sendall(piece if declared else f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                sent[0] += len(piece)
        except OSError:
            pass   # the server closed the connection: the point

    writer = threading.Thread(target=pump, daemon=True)
    writer.start()
    data = b""
    took = None
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
            took = time.monotonic() - started
    except OSError:
        pass
    answer.append(data)
    try:
        s.shutdown(socket.SHUT_RDWR)   # unblocks a writer the server no longer reads from
    except OSError:
        pass
    writer.join(30)
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
    return status, took if took is not None else time.monotonic() - started, sent[0]


@pytest.mark.parametrize("declared", [True, False], ids=["declared-300MB", "chunked"])
def test_an_unauthenticated_revoke_with_a_huge_body_is_413_at_once_and_costs_no_memory(server, declared):
    proc, url, _ = server
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    httpx.get(url.rsplit("/mcp", 1)[0] + "/.well-known/oauth-authorization-server")   # warm every import
    before = _memory_mb(proc.pid)
    status, took, _ = _send_big_body(port, "/revoke", declared=declared)
    after = _memory_mb(proc.pid)
    assert status == 413 and took < 5, (status, took)
    assert after["VmHWM"] - before["VmRSS"] < 8, (before, after)


def test_every_endpoint_bounds_its_body_with_or_without_credentials(server):
    proc, url, tokens = server
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    before = _memory_mb(proc.pid)
    # a chunked body the route never reads (no credential, no such path) may get that answer instead
    for path, token, content_type, unread in (("/register", None, "application/json", 413),
                                              ("/token", None, "application/x-www-form-urlencoded", 413),
                                              ("/mcp", None, "application/json", 401),
                                              ("/mcp", tokens["writer"], "application/json", 413),
                                              ("/nowhere", None, "text/plain", 404)):
        for declared in (True, False):
            status, took, _ = _send_big_body(port, path, declared=declared, token=token, content_type=content_type)
            assert status in (413, unread if not declared else 413) and took < 5, (path, declared, status, took)
    after = _memory_mb(proc.pid)
    assert after["VmHWM"] - before["VmRSS"] < 16, (before, after)
    # a body within the limit is still taken
    base = url.rsplit("/mcp", 1)[0]
    r = httpx.post(f"{base}/revoke", data={"token": "x" * (FORM_BODY_BYTES // 2), "client_id": "nobody"})
    assert r.status_code != 413
    assert FORM_BODY_BYTES < MCP_BODY_BYTES


def test_token_and_revoke_check_host_and_origin(server, places):
    _, url, _ = server
    base = url.rsplit("/mcp", 1)[0]
    form = {"grant_type": "authorization_code", "code": "x", "client_id": "x", "code_verifier": "x" * 43,
            "redirect_uri": "http://127.0.0.1:9/cb"}
    assert httpx.post(f"{base}/token", data=form, headers={"Origin": "http://evil.example"}).status_code == 403
    assert httpx.post(f"{base}/token", data=form, headers={"Host": "evil.example"}).status_code == 421
    revoke = {"token": "x", "client_id": "x"}
    assert httpx.post(f"{base}/revoke", data=revoke, headers={"Origin": "http://evil.example"}).status_code == 403
    assert httpx.post(f"{base}/revoke", data=revoke, headers={"Host": "evil.example"}).status_code == 421
    # without an Origin (a native client) they answer as before
    assert httpx.post(f"{base}/token", data=form).status_code not in (403, 421)
    assert httpx.post(f"{base}/revoke", data=revoke).status_code not in (403, 421)
