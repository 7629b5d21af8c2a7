"""How `brain serve --http` answers: one JSON body per call, on a kept connection,
sent without waiting on the client's ACKs; and a rescope never breaks a call in flight."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    body_of, configured, daemon, http_session, reaper, small_vault, stop_pid,
)
from test_daemon_edges import _slow_llm_daemon
from test_transport_http import INIT_BODY, MCP_HEADERS, _start_http, http_url, tokens  # noqa: F401

from brain.daemon.http.client_rows import set_client_surface
from brain.daemon.http.one_send import CoalescedWrites
from brain.daemon.http.serve import listening_socket
from brain.daemon.protocol.tools import surface_tools

pytestmark = pytest.mark.usefixtures("reaper")


def test_every_accepted_connection_has_nodelay():
    """Without TCP_NODELAY a keep-alive client's next answer waits on its delayed ACK."""
    async def go():
        seen: list[int] = []
        accepted = asyncio.Event()

        class Note(asyncio.Protocol):
            def connection_made(self, transport):
                sock = transport.get_extra_info("socket")
                seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                accepted.set()

        server = await asyncio.get_running_loop().create_server(Note, sock=listening_socket("127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):
            await asyncio.wait_for(accepted.wait(), 10)
        server.close()
        return seen

    assert asyncio.run(go()) == [1]


def test_writes_of_one_loop_turn_leave_together_and_close_sends_them_first():
    async def go():
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        theirs.setblocking(False)
        transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
        out = CoalescedWrites(transport, loop)
        out.write(b"HTTP/1.1 200 OK\r\n\r\n")
        out.write(b"")
        out.write(b'{"ok": true}')
        with pytest.raises(BlockingIOError):  # nothing left during this turn
            theirs.recv(100)
        await asyncio.sleep(0)
        first = theirs.recv(100)
        out.write(b"last words")
        out.close()  # queued bytes go out before the close
        await asyncio.sleep(0.05)
        rest = theirs.recv(100), theirs.recv(100)
        theirs.close()
        return first, rest

    first, rest = asyncio.run(go())
    assert first == b'HTTP/1.1 200 OK\r\n\r\n{"ok": true}'
    assert rest == (b"last words", b"")


def test_calls_are_answered_with_one_json_body_on_one_connection(http_url, tokens):  # noqa: F811
    host, port = http_url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['writer']}"}

    def post(msg: dict, extra: dict | None = None):
        conn.request("POST", "/mcp", body=json.dumps(msg), headers={**headers, **(extra or {})})
        r = conn.getresponse()
        return r, r.read()

    r, body = post(INIT_BODY)
    assert r.status == 200 and r.getheader("content-type") == "application/json"
    sid = {"mcp-session-id": r.getheader("mcp-session-id"), "mcp-protocol-version": "2025-06-18"}
    sock = conn.sock
    r, _ = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    assert r.status == 202
    for i in range(3):
        r, body = post({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                        "params": {"name": "whoami", "arguments": {}}}, sid)
        assert r.status == 200 and r.getheader("content-type") == "application/json"
        answer = json.loads(body)
        assert answer["id"] == 10 + i
        assert json.loads(answer["result"]["content"][0]["text"])["client_id"] == "writer-agent"
    assert conn.sock is sock  # every answer was complete: the one connection carried them all
    conn.close()


def test_a_rescope_during_a_slow_call_lets_it_finish(places, configured, reaper, monkeypatch, tokens):  # noqa: F811
    """The operator narrows a client while its synthesize waits on the LLM: that call is
    answered; the same session's next tools/list already shows the narrower surface."""
    from llm_fakes import FakeLLM

    with FakeLLM() as fake:
        _slow_llm_daemon(places, configured, monkeypatch, fake, delay_s=1.5)
        reaper()
        proc, url = _start_http()
        try:
            async def go():
                async with http_session(url, tokens["writer"]) as s:
                    slow: list = []

                    async def ask():
                        slow.append(await s.call_tool("synthesize", {"question": "Where does Alice Example work?"}))

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(ask)
                        while not fake.calls("/chat/completions"):
                            await anyio.sleep(0.02)
                        assert set_client_surface(places, "writer-agent", "verbs", "operator")
                        listed = {t.name for t in (await s.list_tools()).tools}
                        recalled = await s.call_tool("recall", {"entity": "people/alice-example"})
                        assert not slow  # the recall went by while synthesize still waited
                    return slow[0], listed, recalled

            answer, listed, recalled = anyio.run(go)
        finally:
            stop_pid(proc.pid)
            proc.wait(10)
            proc.stderr.close()
    assert not answer.is_error and "Acme" in body_of(answer)["answer"], body_of(answer)
    assert listed == {t.name for t in surface_tools("verbs")}
    assert not recalled.is_error
