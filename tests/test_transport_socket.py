"""MCP on the daemon's Unix socket: lanes, bad input and faults, many clients."""

from __future__ import annotations

import json
import os
import socket
import time

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    INIT, INITIALIZED, body_of, call_text, configured, daemon, raw_connect, reaper, read_until_id,
    send_lines, small_vault, socket_session, tool_call,
)

from brain.daemon.client.calls import send
from brain.daemon.client.relay import preamble
from brain.daemon.server.socket import caller_from_preamble

pytestmark = pytest.mark.usefixtures("reaper")

REMOTE = {"surface": "full", "lane": "remote", "client": "test"}
LOCAL = {"surface": "full", "lane": "local", "client": "test"}


def _whoami(path, pre) -> dict:
    s = raw_connect(path, pre)
    send_lines(s, INIT, INITIALIZED, tool_call(2, "whoami", {}))
    msg = read_until_id(s, 2)
    s.close()
    return call_text(msg)


def test_lanes_local_needs_the_claim_and_our_uid(daemon):
    assert _whoami(daemon["socket"], LOCAL)["lane"] == "local"
    assert _whoami(daemon["socket"], REMOTE)["lane"] == "remote"
    # no preamble at all: a plain MCP client is remote on the default surface
    assert _whoami(daemon["socket"], None)["lane"] == "remote"
    # the kernel's word decides: a claim from another uid is remote
    assert caller_from_preamble(LOCAL, os.getuid(), "full").remote is False
    assert caller_from_preamble(LOCAL, os.getuid() + 1, "full").remote is True
    assert caller_from_preamble(LOCAL, None, "full").remote is True
    # the relay never forwards a local claim
    assert json.loads(preamble("verbs"))["lane"] == "remote"
    # a read-only claim narrows; a client_id cannot impersonate the local lane
    c = caller_from_preamble({"lane": "remote", "client_id": "local", "read_only": True}, os.getuid(), "verbs")
    assert c.remote and c.client_id == "remote" and not c.can_write and c.surface == "verbs"


def test_private_facts_only_on_the_local_lane(daemon):
    path = daemon["socket"]
    s = raw_connect(path, LOCAL)
    send_lines(s, INIT, INITIALIZED, tool_call(2, "remember", {
        "fact": "Bob's salary is 100", "provenance": "t", "entity": "people/bob", "visibility": "private"}),
        tool_call(3, "remember", {"fact": "Bob builds houses", "provenance": "t", "entity": "people/bob"}))
    private_id = call_text(read_until_id(s, 2))["id"]
    read_until_id(s, 3)
    s.close()
    for pre, expect_private in ((LOCAL, True), (REMOTE, False)):
        s = raw_connect(path, pre)
        send_lines(s, INIT, INITIALIZED, tool_call(2, "recall", {"entity": "people/bob"}),
                   tool_call(3, "forget", {"id": private_id, "reason": "probe"}) if not expect_private else
                   tool_call(3, "whoami", {}))
        facts = call_text(read_until_id(s, 2))["facts"]
        assert any(f["fact_id"] == private_id for f in facts) is expect_private
        third = read_until_id(s, 3)
        if not expect_private:
            assert third["result"]["isError"] is True
            assert call_text(third)["error"] == "not_found"
        s.close()


def test_bad_input_is_answered_and_the_connection_keeps_working(daemon):
    s = raw_connect(daemon["socket"], REMOTE)
    # a tool call before initialize: a JSON-RPC error, not a crash
    send_lines(s, tool_call(7, "recall", {}))
    early = read_until_id(s, 7)
    assert "error" in early
    send_lines(s, INIT, INITIALIZED)
    assert "result" in read_until_id(s, 1)
    # garbage bytes: parse error with a null id
    s.sendall(b"\x00\xff\xfegarbage{{{\n")
    assert read_until_id(s, None)["error"]["code"] == -32700
    # valid JSON that is not JSON-RPC, and a batch
    send_lines(s, {"hello": "world", "id": 9})
    assert read_until_id(s, 9)["error"]["code"] == -32600
    send_lines(s, [INIT, INIT])
    assert read_until_id(s, None)["error"]["code"] == -32600
    # an unknown method
    send_lines(s, {"jsonrpc": "2.0", "id": 11, "method": "brain/nonsense", "params": {}})
    assert read_until_id(s, 11)["error"]["code"] == -32601
    # arguments of the wrong shape reach our validator, not the SDK's
    send_lines(s, {"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                   "params": {"name": "remember", "arguments": {"fact": 5, "provenance": "x"}}})
    msg = read_until_id(s, 12)
    assert msg["result"]["isError"] is True and call_text(msg)["error"] == "invalid_params"
    # and the connection still serves
    send_lines(s, tool_call(13, "recall", {"limit": 1}))
    assert call_text(read_until_id(s, 13))["protocol_version"] == 1
    s.close()


def test_a_50mb_line_is_dropped_without_hurting_anyone(daemon):
    s = raw_connect(daemon["socket"], REMOTE, timeout=30)
    send_lines(s, INIT, INITIALIZED)
    read_until_id(s, 1)
    chunk = b"x" * (1 << 20)
    for _ in range(50):
        s.sendall(chunk)
    s.sendall(b"\n")
    err = read_until_id(s, None)
    assert err["error"]["code"] == -32600 and "longer than" in err["error"]["message"]
    send_lines(s, tool_call(2, "whoami", {}))
    assert call_text(read_until_id(s, 2))["lane"] == "remote"
    s.close()


def test_half_written_requests_and_disconnects_mid_call(daemon, places):
    path = daemon["socket"]
    # half a request, then gone
    s = raw_connect(path, REMOTE)
    send_lines(s, INIT)
    s.sendall(b'{"jsonrpc":"2.0","id":5,"method":"tools/ca')
    s.close()
    # a write sent, then the client vanishes before the answer
    s = raw_connect(path, REMOTE)
    send_lines(s, INIT, INITIALIZED, tool_call(2, "remember", {
        "fact": "written by a client that hung up", "provenance": "t", "entity": "companies/acme"}))
    s.close()
    # a garbage preamble
    s = raw_connect(path, None)
    s.sendall(b"not json at all\n")
    assert read_until_id(s, None)["error"]["code"] == -32700
    s.close()
    # everyone else is still served, and the orphaned write landed
    deadline = time.monotonic() + 5
    while True:
        body, is_error = send(places, daemon["vault"], "recall", {"entity": "companies/acme"})
        assert not is_error
        if body["facts"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert [f["fact"] for f in body["facts"]] == ["written by a client that hung up"]


def test_100_idle_connections_do_not_block_a_new_client(daemon, places):
    idle = []
    try:
        for i in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(daemon["socket"]))
            if i % 2:  # half said hello and went quiet, half never said anything
                send_lines(s, REMOTE, INIT)
            idle.append(s)
        body, is_error = send(places, daemon["vault"], "whoami", {})
        assert not is_error and body["lane"] == "local"
    finally:
        for s in idle:
            s.close()
    body, is_error = send(places, daemon["vault"], "recall", {"limit": 1})
    assert not is_error


def test_ten_clients_two_hundred_mixed_calls_each(daemon):
    """10 SDK sessions at once, 200 calls each: no errors, every remembered fact recalled."""
    clients, calls = 10, 200

    async def client(n: int, out: dict):
        entity = f"people/client-{n}"
        saved = []
        async with socket_session(daemon["socket"], REMOTE) as s:
            for i in range(calls):
                kind = i % 4
                if kind == 0:
                    r = await s.call_tool("remember", {"fact": f"client {n} fact {i}", "provenance": "load",
                                                       "entity": entity})
                    body = body_of(r)
                    assert not r.is_error and body["status"] == "inserted", body
                    saved.append(body["id"])
                elif kind == 1:
                    r = await s.call_tool("recall", {"entity": entity, "limit": 5})
                elif kind == 2:
                    r = await s.call_tool("entity", {"name": "people/bob"})
                else:
                    r = await s.call_tool("recall", {"grep": f"client {n}", "limit": 3})
                assert not r.is_error, body_of(r)
            got = body_of(await s.call_tool("recall", {"entity": entity, "limit": 100}))
        out[n] = (saved, [f["fact_id"] for f in got["facts"]])

    async def go():
        out: dict = {}
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(client, n, out)
        return out

    out = anyio.run(go)
    assert len(out) == clients
    for n, (saved, recalled) in out.items():
        assert len(saved) == calls // 4
        assert sorted(saved) == sorted(recalled), n


def test_slow_calls_never_block_the_fast_ones(places, configured, reaper, monkeypatch):
    """Six synthesize calls waiting on a slow LLM (more than its worker threads)
    while another client's recalls all come back first."""
    from llm_fakes import FakeLLM, json_answer

    from brain.daemon import config as config_mod
    from brain.daemon.client.spawn import connect_or_start

    with FakeLLM() as fake:
        fake.queue(json_answer("Alice works with Bob.", ["people/alice-example"], delay_s=1.2))
        cfg = config_mod.load(places.config_file)
        cfg.update({"llm.provider": "openai", "llm.model": "gpt-4.1-mini", "llm.base_url": fake.openai_url})
        config_mod.save(places.config_file, cfg)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the daemon reads its key from its environment
        sock, _ = connect_or_start(places, configured)
        sock.close()
        reaper()
        path = places.socket_path(configured)
        done: list[str] = []

        async def slow(s, i):
            r = await s.call_tool("synthesize", {"question": "Who does Alice Example work with at Acme?"})
            done.append(f"synthesize-{i}:{body_of(r).get('error', 'ok')}")

        async def fast(s):
            await anyio.sleep(0.3)  # the slow calls are all in flight by now
            for _ in range(20):
                r = await s.call_tool("recall", {"entity": "people/bob"})
                assert not r.is_error
            done.append("recalls")

        async def go():
            async with socket_session(path, REMOTE) as a, socket_session(path, REMOTE) as b:
                async with anyio.create_task_group() as tg:
                    for i in range(6):
                        tg.start_soon(slow, a, i)
                    tg.start_soon(fast, b)

        anyio.run(go)
        assert fake.calls("/chat/completions"), "synthesize never reached the LLM"
    assert done[0] == "recalls", done
    assert len(done) == 7 and all(d.endswith(":ok") for d in done[1:]), done
