"""`brain serve --http` as people deploy it: a free port, all interfaces, a rebinding Host."""

from __future__ import annotations

import socket

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault, stop_pid  # noqa: F401  (fixtures)
from test_transport_http import INIT_BODY, MCP_HEADERS, _http, _start_http, tokens  # noqa: F401

pytestmark = pytest.mark.usefixtures("reaper")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def test_port_zero_picks_a_free_port_each_time(daemon, tokens):
    """`--port 0` asks the system for a free port: two servers side by side both start."""
    a, url_a = _start_http()
    try:
        b, url_b = _start_http()
        try:
            assert _port(url_a) != 0 and _port(url_b) != 0 and _port(url_a) != _port(url_b)
            auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['writer']}"}
            assert _http("POST", url_b, auth, INIT_BODY).status_code == 200
        finally:
            stop_pid(b.pid)
            b.wait(10)
            b.stderr.close()
    finally:
        stop_pid(a.pid)
        a.wait(10)
        a.stderr.close()


def test_all_interfaces_accepts_this_machines_names_but_not_foreign_ones(daemon, tokens):
    """Bound to 0.0.0.0 for remote agents: a request naming this host is served; a rebinding
    Host is still refused."""
    proc, url = _start_http("--host", "0.0.0.0")
    try:
        port = _port(url)
        local = url.replace("0.0.0.0", "127.0.0.1")
        auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['writer']}"}
        ok = _http("POST", local, {**auth, "Host": f"{socket.gethostname()}:{port}"}, INIT_BODY)
        assert ok.status_code == 200
        bad = _http("POST", local, {**auth, "Host": f"evil.example:{port}"}, INIT_BODY)
        assert bad.status_code in (403, 421)
        no_token = _http("POST", local, {**MCP_HEADERS, "Host": f"{socket.gethostname()}:{port}"}, INIT_BODY)
        assert no_token.status_code == 401
    finally:
        stop_pid(proc.pid)
        proc.wait(10)
        proc.stderr.close()


def test_a_corrupt_token_file_is_an_error_with_the_fix_not_a_traceback(places, configured):
    from daemon_fixtures import run_brain

    from brain.daemon.http.tokens import tokens_file

    tokens_file(places).parent.mkdir(parents=True, exist_ok=True)
    tokens_file(places).write_text("{not json")
    r = run_brain("serve", "--http", "--port", "0", timeout=30)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(tokens_file(places)) in r.stderr and "delete" in r.stderr
