"""MCP over stdio, with the SDK's stdio client: in-process (`brain serve
--no-daemon`) and through the relay to the daemon (`brain serve`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tempfile
import time

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, body_of, child_env, configured, daemon, reaper, small_vault, stdio_session,
)

from brain.daemon.protocol.tools import ALL_TOOLS, VERB_NAMES, surface_tools

pytestmark = pytest.mark.usefixtures("reaper")


def test_surfaces_listed_over_stdio_in_process(configured):
    """tools/list per surface: exact sets, nested, no outputSchema, verb descriptions."""

    async def go():
        listed = {}
        for surface in ("verbs", "starter", "full"):
            async with stdio_session(["serve", "--no-daemon", "--surface", surface]) as s:
                tools = (await s.list_tools()).tools
                listed[surface] = {t.name for t in tools}
                for t in tools:
                    assert t.output_schema is None
                    assert t.input_schema["type"] == "object"
                    if t.name == "synthesize":
                        assert t.description.startswith("[EXPENSIVE")
                    elif t.name in VERB_NAMES:
                        assert t.description.startswith("MEMORY VERB (v1): ")
                if surface == "verbs":
                    # hidden and nonexistent tools answer the same bytes
                    hidden = await s.call_tool("put_page", {"slug": "x", "content": "y"})
                    ghost = await s.call_tool("no_such_tool", {})
                    assert hidden.is_error and ghost.is_error
                    assert body_of(hidden) == {"error": "unknown_tool", "message": "Unknown tool: put_page"}
                    assert body_of(ghost)["error"] == "unknown_tool"
                    assert "protocol_version" not in body_of(ghost)
                    # a verb on the same surface still works
                    ok = await s.call_tool("recall", {"limit": 1})
                    assert not ok.is_error and body_of(ok)["protocol_version"] == 1
        return listed

    listed = anyio.run(go)
    assert listed["verbs"] == set(VERB_NAMES)
    assert listed["starter"] == set(VERB_NAMES) | {"put_page", "get_page", "list_pages", "whoami", "status",
                                                   "request_tools"}
    assert listed["full"] == set(ALL_TOOLS)
    assert listed["verbs"] < listed["starter"] < listed["full"]
    assert [t.name for t in surface_tools("full")] == [t.name for t in surface_tools("full")]


def test_verbs_round_trip_over_stdio_in_process(configured):
    """remember → recall → forget as a remote caller; private facts stay hidden; errors are envelopes."""

    async def go():
        async with stdio_session(["serve", "--no-daemon"]) as s:
            who = body_of(await s.call_tool("whoami", {}))
            assert who["lane"] == "remote" and who["transport"] == "stdio"
            r = await s.call_tool("remember", {"fact": "Alice prefers tea", "provenance": "stdio test",
                                               "entity": "Alice Example"})
            saved = body_of(r)
            assert not r.is_error and saved["status"] == "inserted"
            assert saved["entity_slug"] == "people/alice-example"
            p = body_of(await s.call_tool("remember", {"fact": "Alice's door code is 1234", "provenance": "t",
                                                       "entity": "people/alice-example", "visibility": "private"}))
            got = body_of(await s.call_tool("recall", {"entity": "people/alice-example"}))
            texts = [f["fact"] for f in got["facts"]]
            assert "Alice prefers tea" in texts
            assert not any("door code" in t for t in texts)  # remote never sees private facts
            f = await s.call_tool("forget", {"id": p["id"]})
            assert f.is_error and body_of(f)["error"] == "not_found"  # nor forgets them
            bad = await s.call_tool("remember", {"fact": "no provenance"})
            assert bad.is_error
            env = body_of(bad)
            assert env["error"] == "invalid_params" and env["protocol_version"] == 1
            gone = body_of(await s.call_tool("forget", {"id": saved["id"]}))
            assert gone["expired"] is True
            card = await s.call_tool("entity", {"name": "Ally"})  # alias, resolved through the index
            assert not card.is_error and body_of(card)["found"] is True
            hidden = body_of(await s.call_tool("entity", {"name": "Secret Person"}))
            assert hidden["found"] is False  # a private page never resolves for a remote caller

    anyio.run(go)


def test_stdout_carries_only_json_rpc_and_eof_ends_server(configured):
    """Every stdout line is a JSON-RPC frame; stdin EOF ends the process."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen([BRAIN, "serve", "--no-daemon"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env())
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    proc.stdin.flush()
    out = []
    while len(out) < 2:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        out.append(json.loads(line))
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert all(m["jsonrpc"] == "2.0" for m in out)
    assert {m["id"] for m in out} == {1, 2}
    assert proc.stdout.read() == b""
    proc.stdout.close()
    proc.stderr.close()
    # SIGTERM ends it too, and the vault's writer lock goes with it
    import signal

    from brain.daemon.vault_lock import VaultLock

    proc = subprocess.Popen([BRAIN, "serve", "--no-daemon"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env())
    proc.stdin.write(json.dumps(lines[0]).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    assert VaultLock(configured).holder()["pid"] == proc.pid
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    probe = VaultLock(configured)
    probe.acquire("test")
    probe.release()
    proc.stdin.close()
    proc.stdout.close()


def test_relay_surfaces_and_round_trip(daemon):
    """`brain serve` relays to the daemon: surface from the flag, remote lane, verbs work."""

    async def go():
        async with stdio_session(["serve", "--surface", "verbs"]) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == set(VERB_NAMES)
            assert body_of(await s.call_tool("whoami", {}))["error"] == "unknown_tool"
            saved = body_of(await s.call_tool("remember", {"fact": "Bob likes bricks", "provenance": "relay",
                                                           "entity": "people/bob"}))
            assert saved["status"] == "inserted"
        async with stdio_session(["serve"]) as s:
            assert {t.name for t in (await s.list_tools()).tools} == set(ALL_TOOLS)
            who = body_of(await s.call_tool("whoami", {}))
            assert who["lane"] == "remote" and who["transport"] == "stdio"
            got = body_of(await s.call_tool("recall", {"entity": "people/bob"}))
            assert [f["fact"] for f in got["facts"]] == ["Bob likes bricks"]

    anyio.run(go)


def test_surface_from_config_and_force_env_only_narrows(daemon, places, monkeypatch):
    from brain.daemon import config as config_mod
    from brain.daemon.client.relay import SurfaceError, resolve_surface

    assert resolve_surface(None, {}, {}) == ("full", None)
    assert resolve_surface(None, {"mcp_surface": "starter"}, {}) == ("starter", None)
    assert resolve_surface("verbs", {"mcp_surface": "full"}, {}) == ("verbs", None)
    assert resolve_surface("verbs", {}, {"BRAIN_MCP_FORCE_SURFACE": "full"}) == ("verbs", None)
    assert resolve_surface("full", {}, {"BRAIN_MCP_FORCE_SURFACE": "starter"}) == ("starter", None)
    surface, warning = resolve_surface("starter", {}, {"BRAIN_MCP_FORCE_SURFACE": "bogus"})
    assert surface == "starter" and "ignored" in warning
    with pytest.raises(SurfaceError):
        resolve_surface("everything", {}, {})

    cfg = config_mod.load(places.config_file)
    cfg["mcp_surface"] = "verbs"
    config_mod.save(places.config_file, cfg)

    async def go():
        async with stdio_session(["serve"]) as s:
            return {t.name for t in (await s.list_tools()).tools}

    assert anyio.run(go) == set(VERB_NAMES)
    bad = subprocess.run([BRAIN, "serve", "--surface", "nope"], capture_output=True, text=True,
                         env=child_env(), timeout=30, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "unknown surface" in bad.stderr


def test_relay_restarts_a_dead_daemon_and_says_so(daemon, places):
    """kill -9 under a live relay session: the next call starts a new daemon."""
    from brain.daemon.rendezvous import read_pid_file

    errlog = tempfile.TemporaryFile(mode="w+")

    async def go():
        async with stdio_session(["serve"], errlog=errlog) as s:
            first = body_of(await s.call_tool("remember", {"fact": "survives a crash", "provenance": "t",
                                                           "entity": "people/bob"}))
            os.kill(daemon["pid"], 9)
            await anyio.sleep(0.3)
            got = await s.call_tool("recall", {"entity": "people/bob"})
            return first, body_of(got)

    first, got = anyio.run(go)
    assert [f["fact_id"] for f in got["facts"]] == [first["id"]]
    new = read_pid_file(places, daemon["vault"])
    assert new["pid"] != daemon["pid"]
    errlog.seek(0)
    err = errlog.read()
    assert "daemon stopped" in err and "reconnected" in err


def test_relay_ends_on_eof_and_on_sigterm_and_stays_lean(daemon):
    import signal
    import sys

    for how in ("eof", "sigterm"):
        proc = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env())
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        ).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        if how == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        for f in (proc.stdout, proc.stderr, proc.stdin):
            if not f.closed:
                f.close()
    # the relay path never loads the MCP SDK (or anything heavy)
    code = ("import sys; import brain.cli.entry, brain.cli.daemon_cmd, brain.daemon.client.relay, "
            "brain.daemon.client.spawn, brain.daemon.client.calls\n"
            "print([m for m in ('mcp', 'mcp_types', 'anyio', 'typer', 'numpy', 'torch', 'pydantic') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
