"""Streamable HTTP MCP (`brain serve --http`) with bearer tokens, on loopback."""

from __future__ import annotations

import re
import subprocess

import json
import urllib.error
import urllib.request

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, body_of, child_env, configured, daemon, http_session, reaper, small_vault, stop_pid,
)

from brain.daemon.http.tokens import create_token, revoke_token
from brain.daemon.client.calls import send
from brain.daemon.protocol.tools import ALL_TOOLS, VERB_NAMES
from brain.daemon.vault_lock import VaultLock

pytestmark = pytest.mark.usefixtures("reaper")

INIT_BODY = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class _Reply:
    def __init__(self, status: int, headers, body: bytes):
        self.status_code, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def _http(method: str, url: str, headers: dict, body: dict | None = None) -> _Reply:
    """One plain HTTP request (stdlib), whatever the status."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            # an SSE answer stays open: the status and headers are enough
            return _Reply(r.status, r.headers, b"")
    except urllib.error.HTTPError as e:
        return _Reply(e.code, e.headers, e.read())


@pytest.fixture
def tokens(places):
    return {"writer": create_token(places, "writer-agent", can_write=True),
            "reader": create_token(places, "reader-agent", can_write=False)}


def _start_http(*extra) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0", *extra], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env(), text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"MCP on (http://\S+/mcp)", line)
        if m:
            return proc, m.group(1)
        if len(lines) > 20:
            break
    proc.kill()
    raise AssertionError("HTTP server did not start: " + "".join(lines))


@pytest.fixture
def http_url(daemon, tokens):
    proc, url = _start_http()
    yield url
    stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


def test_missing_or_bad_token_is_401_before_any_mcp(http_url):
    r = _http("POST", http_url, MCP_HEADERS, INIT_BODY)
    assert r.status_code == 401
    # the OAuth error shape (RFC 6750), plus our message and fix; the header points at the metadata
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert 'resource_metadata="http://127.0.0.1:' in r.headers["www-authenticate"]
    assert r.json()["error"] == "invalid_token" and "brain auth token create" in r.json()["suggestion"]
    r = _http("POST", http_url, {**MCP_HEADERS, "Authorization": "Bearer brain_nope"}, INIT_BODY)
    assert r.status_code == 401
    r = _http("GET", http_url, {"Authorization": "Basic abc"})
    assert r.status_code == 401


def test_dns_rebinding_protection_rejects_foreign_hosts(http_url, tokens):
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['writer']}"}
    bad = _http("POST", http_url, {**auth, "Host": "evil.example:3131"}, INIT_BODY)
    assert bad.status_code in (403, 421)
    bad = _http("POST", http_url, {**auth, "Origin": "http://evil.example"}, INIT_BODY)
    assert bad.status_code == 403
    ok = _http("POST", http_url, auth, INIT_BODY)
    assert ok.status_code == 200


def test_verbs_round_trip_over_http_with_a_write_token(http_url, tokens, places, daemon):
    # a private fact saved on the local lane must never reach an HTTP caller
    send(places, daemon["vault"], "remember", {
        "fact": "Alice's home address", "provenance": "t", "entity": "people/alice-example",
        "visibility": "private"})

    async def go():
        async with http_session(http_url, tokens["writer"]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == set(ALL_TOOLS)
            assert all(t.output_schema is None for t in (await s.list_tools()).tools)
            who = body_of(await s.call_tool("whoami", {}))
            assert who == {**who, "transport": "http", "lane": "remote", "client_id": "writer-agent",
                           "can_write": True}
            saved = body_of(await s.call_tool("remember", {"fact": "Alice runs marathons", "provenance": "http",
                                                           "entity": "people/alice-example"}))
            assert saved["status"] == "inserted"
            got = body_of(await s.call_tool("recall", {"entity": "people/alice-example"}))
            assert [f["fact"] for f in got["facts"]] == ["Alice runs marathons"]
            gone = body_of(await s.call_tool("forget", {"id": saved["id"]}))
            assert gone["expired"] is True
            bad = await s.call_tool("remember", {"fact": "x", "provenance": "   "})
            assert bad.is_error and body_of(bad)["error"] == "provenance_required"

    anyio.run(go)
    # the HTTP server forwarded everything: the daemon is still the one writer
    assert VaultLock(daemon["vault"]).holder()["pid"] == daemon["pid"]


def test_read_only_token_gets_scope_denied_on_writes(http_url, tokens, places, daemon):
    body, _ = send(places, daemon["vault"], "remember",
                          {"fact": "Bob likes red", "provenance": "t", "entity": "people/bob"})

    async def go():
        async with http_session(http_url, tokens["reader"]) as s:
            for name, args in (("remember", {"fact": "x", "provenance": "y"}),
                               ("forget", {"id": body["id"]}),
                               ("put_page", {"slug": "notes/x", "content": "# x"})):
                r = await s.call_tool(name, args)
                assert r.is_error
                env = body_of(r)
                assert env["error"] == "scope_denied" and env["protocol_version"] == 1 and env["suggestion"]
            got = body_of(await s.call_tool("recall", {"entity": "people/bob"}))
            assert [f["fact_id"] for f in got["facts"]] == [body["id"]]
            assert body_of(await s.call_tool("whoami", {}))["can_write"] is False

    anyio.run(go)


def test_revoked_token_is_refused_at_once(http_url, tokens, places):
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['reader']}"}
    assert _http("POST", http_url, auth, INIT_BODY).status_code == 200
    assert revoke_token(places, "reader-agent")
    assert _http("POST", http_url, auth, INIT_BODY).status_code == 401


def test_http_surface_flag(daemon, tokens):
    proc, url = _start_http("--surface", "verbs")
    try:
        async def go():
            async with http_session(url, tokens["writer"]) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                hidden = await s.call_tool("whoami", {})
                return names, body_of(hidden)

        names, hidden = anyio.run(go)
        assert names == set(VERB_NAMES)
        assert hidden == {"error": "unknown_tool", "message": "Unknown tool: whoami"}
    finally:
        stop_pid(proc.pid)
        proc.wait(10)
        proc.stderr.close()


def test_busy_port_is_a_clear_error(daemon, tokens):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        r = subprocess.run([BRAIN, "serve", "--http", "--port", str(port)], capture_output=True, text=True,
                           env=child_env(), timeout=30, stdin=subprocess.DEVNULL)
        assert r.returncode == 1 and "cannot listen" in r.stderr and "--port" in r.stderr
    finally:
        s.close()


def test_delta_cursors_are_namespaced_by_token_name(http_url, tokens):
    async def go():
        async with http_session(http_url, tokens["writer"]) as w, http_session(http_url, tokens["reader"]) as r:
            first = body_of(await w.call_tool("delta", {"session_id": "shared-name"}))
            assert first["facts"] == []
            await anyio.sleep(0.02)
            body_of(await w.call_tool("remember", {"fact": "Acme hired Dana", "provenance": "t",
                                                   "entity": "companies/acme"}))
            again = body_of(await w.call_tool("delta", {"session_id": "shared-name"}))
            assert [f["fact"] for f in again["facts"]] == ["Acme hired Dana"]
            # the same session id under another token is that token's own first wake
            other = body_of(await r.call_tool("delta", {"session_id": "shared-name"}))
            assert other["facts"] == [] and other["pages"] == []

    anyio.run(go)
