"""Every request is answered, on every transport: an invalid `id` gets Invalid Request with id null,
and arguments nested too deep are Invalid params over HTTP as on the socket (docs/protocol.md §1.6)."""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, INIT, INITIALIZED, call_text, child_env, configured, daemon, raw_connect, reaper, read_until_id,
    send_lines, small_vault, stop_pid, tool_call,
)
from test_transport_http import INIT_BODY, MCP_HEADERS, _http, _start_http, tokens  # noqa: F401

pytestmark = pytest.mark.usefixtures("reaper")

BAD_IDS = (b"null", b"{}", b"1.5", b"[1]", b"true")


def _whoami(raw_id: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"tools/call","params":{"name":"whoami","arguments":{}}}'


def test_every_invalid_id_is_answered_on_the_socket(daemon):
    s = raw_connect(daemon["socket"], {"surface": "full", "lane": "remote", "client": "t"}, timeout=20)
    send_lines(s, INIT, INITIALIZED)
    read_until_id(s, 1)
    for raw in BAD_IDS:
        s.sendall(_whoami(raw) + b"\n")
        err = read_until_id(s, None)["error"]
        assert err["code"] == -32600 and '"id"' in err["message"], (raw, err)
    # a notification (no id at all) is still not answered, and the session goes on
    send_lines(s, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
               tool_call(2, "whoami", {}))
    assert call_text(read_until_id(s, 2))["lane"] == "remote"
    s.close()


def _read_within(proc, seconds: float) -> dict:
    import select

    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    assert ready, f"no answer within {seconds} s"
    return json.loads(proc.stdout.readline())


def test_every_invalid_id_is_answered_through_the_relay(daemon):
    proc = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env())
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        for raw in BAD_IDS:
            proc.stdin.write(_whoami(raw) + b"\n")
            proc.stdin.flush()
            msg = _read_within(proc, 20)
            assert msg["id"] is None and msg["error"]["code"] == -32600, (raw, msg)
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.fixture
def http(daemon, tokens):
    proc, url = _start_http()
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['writer']}"}
    init = _http("POST", url, auth, INIT_BODY)
    assert init.status_code == 200
    auth["mcp-session-id"] = init.headers["mcp-session-id"]
    auth["mcp-protocol-version"] = "2025-06-18"
    yield url, auth
    stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


def _post_raw(url: str, headers: dict, body: bytes):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_every_invalid_id_is_answered_over_http(http):
    url, auth = http
    for raw in BAD_IDS:
        status, body = _post_raw(url, auth, _whoami(raw))
        assert status == 400 and body, (raw, status, body)
        msg = json.loads(body)
        assert msg["id"] is None and msg["error"]["code"] == -32600, (raw, msg)
    status, body = _post_raw(url, auth, _whoami(b'"ok"'))
    assert status == 200 and json.loads(body)["id"] == "ok"


def test_deep_arguments_are_invalid_params_over_http_as_on_the_socket(http, daemon):
    url, auth = http
    s = raw_connect(daemon["socket"], {"surface": "full", "lane": "remote", "client": "t"}, timeout=20)
    send_lines(s, INIT, INITIALIZED)
    read_until_id(s, 1)
    for depth in (65, 100, 255, 300):
        line = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall","arguments":{"x":'
                + b"[" * depth + b"]" * depth + b"}}}")
        status, body = _post_raw(url, auth, line)
        over_http = json.loads(body)
        s.sendall(line + b"\n")
        on_socket = read_until_id(s, 7)
        assert status == 400 and over_http == on_socket, (depth, over_http, on_socket)
        assert over_http["error"]["code"] == -32602 and "levels deep" in over_http["error"]["message"]
    s.close()


def test_every_invalid_id_is_answered_without_a_daemon(configured):
    proc = subprocess.Popen([BRAIN, "serve", "--no-daemon"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env())
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
        proc.stdin.flush()
        assert _read_within(proc, 60)["id"] == 1
        for raw in BAD_IDS:
            proc.stdin.write(_whoami(raw) + b"\n")
            proc.stdin.flush()
            msg = _read_within(proc, 20)
            assert msg["id"] is None and msg["error"]["code"] == -32600, (raw, msg)
        deep = (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":{"x":'
                + b"[" * 300 + b"]" * 300 + b"}}}\n")
        proc.stdin.write(deep + json.dumps(tool_call(6, "whoami", {})).encode() + b"\n")
        proc.stdin.flush()
        assert _read_within(proc, 20)["error"]["code"] == -32602
        assert call_text(_read_within(proc, 20))["transport"] == "stdio"
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
        proc.stdout.close()
