"""delta cursors per caller: no agent can evict another's cursor (docs/protocol.md §3.7)."""

from __future__ import annotations

import json
import os

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    INIT, INITIALIZED, call_text, configured, daemon, reaper, small_vault, tool_call,
)
from test_relay_survival import Host

from brain.daemon.client.relay import preamble
from brain.daemon.server.socket import caller_from_preamble
from brain.daemon.verbs.cursors import client_of, cursor_namespace

pytestmark = pytest.mark.usefixtures("reaper")


def test_each_client_id_is_its_own_namespace():
    uid = os.getuid()

    def ns(pre):
        return client_of(caller_from_preamble(pre, uid, "full"))

    relay_a = json.loads(preamble("full", "serve-a"))
    relay_b = json.loads(preamble("full", "serve-b"))
    assert ns(relay_a) == "stdio:serve-a" and ns(relay_b) == "stdio:serve-b"
    assert ns({"lane": "remote", "client_id": "agent-7"}) == "socket:agent-7"
    # the HTTP front end's token names stay as they were, apart from socket clients of the same name
    assert ns({"lane": "remote", "transport": "http", "client_id": "agent-7"}) == "agent-7"
    # no id: cursors in a namespace of the connection's own, never shared, never a local one by claim;
    # its idempotency keys stay "remote", since a retry comes on a new connection
    anon = [caller_from_preamble(pre, uid, "full")
            for pre in ({"lane": "remote"}, {"lane": "remote"}, {"lane": "remote", "client_id": "local"})]
    spaces = [cursor_namespace(c) for c in anon]
    assert len(set(spaces)) == 3 and all(a.startswith("socket:conn-") for a in spaces), spaces
    assert {client_of(c) for c in anon} == {"remote"}
    assert ns({"lane": "remote", "transport": "http", "client_id": "local:x"}) == "remote"
    assert ns({"lane": "local"}) == "local" and ns({"lane": "local", "client_id": "hook"}) == "local:hook"


def test_one_relays_flood_of_sessions_never_evicts_another_relays_cursor(daemon):
    """Two MCP hosts, each through its own `brain serve`: one opens 1,050
    delta sessions (over the 1,000 a client keeps); the other's cursor stays."""
    quiet, busy = Host(), Host()
    quiet.send(tool_call(2, "delta", {"session_id": "mine"}))
    assert call_text(quiet.read(2))["pages"] == []  # first wake: the cursor is set
    busy.send(*(tool_call(10 + i, "delta", {"session_id": f"flood-{i}"}) for i in range(1050)))
    for i in range(1050):
        busy.read(10 + i, timeout=120)
    quiet.send(tool_call(3, "remember", {"fact": "The boiler was serviced today", "provenance": "t"}))
    assert call_text(quiet.read(3))["status"] == "inserted"
    quiet.send(tool_call(4, "delta", {"session_id": "mine"}))
    woke = call_text(quiet.read(4))
    # an evicted cursor would make this a first wake again, which delivers nothing
    assert [f["fact"] for f in woke["facts"]] == ["The boiler was serviced today"]
    quiet.close()
    busy.close()


def test_a_flood_over_many_client_ids_keeps_every_cursor_in_use(tmp_path, monkeypatch):
    import time

    from brain.daemon.server import cursor_store as cursors
    from brain.daemon.stores import cursor_limits
    from page_seed import now

    monkeypatch.setattr(cursor_limits, "MAX_ROWS_TOTAL", 20)
    store = cursors.SQLiteCursorStore(tmp_path / "c.sqlite")
    store.put("stdio:quiet", "mine", cursors.Cursor(now(), None, now(), None))
    for i in range(40):  # ten flooding ids, four sessions each
        store.put(f"socket:flood-{i % 10}", f"s{i}", cursors.Cursor(now(), None, now(), None))
        time.sleep(0.002)
    assert store.count() == 20
    assert store.get("stdio:quiet", "mine") is not None


def test_a_flood_of_new_namespaces_never_evicts_a_cursor_used_today(tmp_path, monkeypatch):
    """12,600 namespaces of four cursors each took all ten of a quiet caller's cursors: the biggest
    namespace lost its oldest. Now the least recently used go, and none used within the floor."""
    import datetime as dt

    from brain.daemon.server import cursor_store as cursors
    from brain.daemon.stores import cursor_limits
    from page_seed import now

    monkeypatch.setattr(cursor_limits, "MAX_ROWS_TOTAL", 60)
    store = cursors.SQLiteCursorStore(tmp_path / "c.sqlite")
    stale = cursors.iso(cursors.utcnow() - dt.timedelta(days=3))
    for i in range(10):
        store.put("remote", f"old-{i}", cursors.Cursor(now(), None, now(), None))
    store._conn().execute("UPDATE cursors SET touched_at = ? WHERE session_id LIKE 'old-%'", (stale,))
    for i in range(10):
        store.put("socket:victim", f"mine-{i}", cursors.Cursor(now(), None, now(), None))
    kept = [store.put(f"socket:conn-{i}", f"s{j}", cursors.Cursor(now(), None, now(), None))
            for i in range(300) for j in range(4)]
    assert all(store.get("socket:victim", f"mine-{i}") is not None for i in range(10))
    assert store.count() <= 60 and store.count("remote") == 0   # the idle ones made room first
    assert kept.count(False) == 1200 - 50   # then the flood's new cursors were not kept
