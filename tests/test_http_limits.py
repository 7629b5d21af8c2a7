"""`brain serve --http` under idle, half-sent and abandoned connections (real server, real sockets)."""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault, stop_pid  # noqa: F401  (fixtures)
from test_transport_http import INIT_BODY, MCP_HEADERS, _http, _start_http, tokens  # noqa: F401

from brain.daemon.http.limits import HEADER_TIMEOUT_S, MAX_CONNECTIONS

pytestmark = pytest.mark.usefixtures("reaper")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _closed_by_server(s: socket.socket) -> bool:
    ready, _, _ = select.select([s], [], [], 0)
    if not ready:
        return False
    try:
        return s.recv(4096) == b""
    except OSError:
        return True


def _post_head(port: int, token: str, length: int) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


@pytest.fixture
def server(daemon, tokens):
    proc, url = _start_http()
    yield proc, url, tokens["writer"]
    stop_pid(proc.pid)
    proc.wait(10)


def test_an_idle_flood_neither_starves_calls_nor_lives_for_ever(server):
    proc, url, token = server
    port = _port(url)
    flood = []
    for i in range(300):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if i % 6 == 1:
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
        elif i % 6 == 2:
            s.sendall(_post_head(port, token, 1000) + b'{"jsonrpc"')  # body never finished
        flood.append(s)
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    started = time.monotonic()
    assert _http("POST", url, auth, INIT_BODY).status_code == 200
    assert time.monotonic() - started < 10
    time.sleep(1.0)
    # past the cap the oldest idle connections made room at once
    assert sum(_closed_by_server(s) for s in flood) >= 300 - MAX_CONNECTIONS
    time.sleep(HEADER_TIMEOUT_S + 3)
    waiting_for_headers = [s for i, s in enumerate(flood) if i % 6 != 2]
    assert all(_closed_by_server(s) for s in waiting_for_headers)
    for s in flood:
        s.close()
    assert _http("POST", url, auth, INIT_BODY).status_code == 200


def test_a_client_leaving_mid_body_is_one_log_line(server):
    proc, url, token = server
    port = _port(url)
    body = json.dumps(INIT_BODY).encode()
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(_post_head(port, token, len(body)) + body[:10])
        time.sleep(0.3)
        s.close()
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    assert _http("POST", url, auth, INIT_BODY).status_code == 200
    time.sleep(0.5)
    stop_pid(proc.pid)
    proc.wait(10)
    err = proc.stderr.read()
    assert "Traceback" not in err and "ClientDisconnect" not in err, err
    assert err.count("went away in the middle of a request body") == 3, err


def _drained_and_closed(s: socket.socket) -> bool:
    """True when the server closed the connection (after whatever answer it sent first)."""
    s.setblocking(False)
    try:
        while True:
            if s.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def _hold_slow_bodies(port: int, count: int, stop) -> list[socket.socket]:
    """`count` connections that send headers without a valid credential, then a body one byte at a time."""
    held = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(_post_head(port, "not-a-token", 100000) + b'{"jsonrpc"')
        held.append(s)

    def dribble() -> None:
        while not stop.wait(1.0):
            for s in held:
                try:
                    s.sendall(b" ")
                except OSError:
                    pass

    import threading

    threading.Thread(target=dribble, daemon=True).start()
    return held


def test_unauthenticated_slow_bodies_never_starve_authenticated_calls(server):
    import threading

    from brain.daemon.http.limits import UNAUTHENTICATED_SLOTS

    proc, url, token = server
    port = _port(url)
    stop = threading.Event()
    held = _hold_slow_bodies(port, MAX_CONNECTIONS + 30, stop)
    try:
        time.sleep(2.0)
        auth = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        failures = 0
        for _ in range(30):
            try:
                ok = _http("POST", url, auth, INIT_BODY).status_code == 200
            except OSError:
                ok = False
            failures += not ok
        assert failures == 0
        # past their budget the oldest unauthenticated requests were closed
        open_ones = sum(not _drained_and_closed(s) for s in held)
        assert open_ones <= UNAUTHENTICATED_SLOTS, open_ones
    finally:
        stop.set()
        for s in held:
            s.close()
