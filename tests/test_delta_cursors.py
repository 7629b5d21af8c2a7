"""delta's session cursors: namespacing, fail-open storage, expiry, row caps (docs/protocol.md §3.7, §10)."""

import sqlite3
import time

from brain.daemon.server import cursor_store as cursors
from brain.daemon.verbs.cursors import client_of
from brain.daemon.protocol.caller import Caller
from page_seed import add_page, days_ago, now
from test_delta import EPOCH, add_fact, cursor_rows, fresh_time, slugs, wake


def test_cursor_namespacing(engine, local):
    alice = Caller(remote=True, client_id="alice-token", transport="http")
    bob = Caller(remote=True, client_id="bob-token", transport="http")
    anon = Caller(remote=True, client_id="", transport="stdio")
    liar = Caller(remote=True, client_id="local", transport="http")
    for c in (alice, bob, anon, liar, local):
        wake(engine, c, session_id="shared")
    assert sorted(r[0] for r in cursor_rows(engine)) == ["alice-token", "bob-token", "local", "remote"]
    # alice's cursor moves; bob's does not
    add_page(engine.page_db, "p/n", "N", updated_at=fresh_time())
    assert slugs(wake(engine, alice, session_id="shared")) == ["p/n"]
    assert wake(engine, alice, session_id="shared")["pages"] == []
    assert slugs(wake(engine, bob, session_id="shared")) == ["p/n"]


def test_cursor_store_outage_is_fail_open(engine, remote):
    add_page(engine.page_db, "p/a", "A")
    add_fact(engine, "a fact", at=days_ago(1))
    path = engine.state_dir / cursors.FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    body = wake(engine, remote, since=EPOCH, session_id="s", budget_tokens=100)
    assert slugs(body) == ["p/a"] and [f["fact"] for f in body["facts"]] == ["a fact"]
    assert body["budget_used"] > 0 and body["text"]
    first = wake(engine, remote, session_id="s2")
    assert first["pages"] == [] and first["has_more"] is False


def test_idle_cursors_expire_after_seven_days(engine, remote):
    wake(engine, remote, session_id="stale")
    wake(engine, remote, session_id="fresh")
    db = sqlite3.connect(str(engine.state_dir / cursors.FILE_NAME))
    db.execute("UPDATE cursors SET touched_at = ? WHERE session_id = 'stale'", (days_ago(8),))
    db.commit()
    db.close()
    wake(engine, remote, session_id="another")  # a first wake collects garbage
    assert sorted(r[1] for r in cursor_rows(engine)) == ["another", "fresh"]


def test_opening_the_store_collects_garbage(tmp_path):
    store = cursors.SQLiteCursorStore(tmp_path / "c.sqlite")
    store.put("c", "old", cursors.Cursor(now(), None, now(), None))
    store.close()
    db = sqlite3.connect(str(tmp_path / "c.sqlite"))
    db.execute("UPDATE cursors SET touched_at = ?", (days_ago(30),))
    db.commit()
    db.close()
    assert cursors.SQLiteCursorStore(tmp_path / "c.sqlite").count() == 0


def test_each_client_keeps_at_most_the_newest_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(cursors, "MAX_ROWS_PER_CLIENT", 5)
    store = cursors.SQLiteCursorStore(tmp_path / "c.sqlite")
    for i in range(8):
        store.put("busy", f"s{i}", cursors.Cursor(now(), None, now(), None))
        time.sleep(0.002)
    store.put("quiet", "only", cursors.Cursor(now(), None, now(), None))
    assert store.count("busy") == 5 and store.count("quiet") == 1
    assert store.get("busy", "s0") is None and store.get("busy", "s7") is not None


def test_last_writer_wins(tmp_path):
    store = cursors.SQLiteCursorStore(tmp_path / "c.sqlite")
    store.put("c", "s", cursors.Cursor("2026-01-02T00:00:00.000Z", "b", "2026-01-02T00:00:00.000Z", 9))
    store.put("c", "s", cursors.Cursor("2026-01-01T00:00:00.000Z", "a", "2026-01-01T00:00:00.000Z", None))
    assert store.get("c", "s") == cursors.Cursor("2026-01-01T00:00:00.000Z", "a", "2026-01-01T00:00:00.000Z", None)


def test_client_ids():
    assert client_of(Caller.local()) == "local"
    assert client_of(Caller(remote=True, client_id="  tok  ")) == "tok"
    assert client_of(Caller(remote=True, client_id="local")) == "remote"
    assert client_of(Caller(remote=True, client_id="   ")) == "remote"
    assert len(client_of(Caller(remote=True, client_id="x" * 5000))) == 200


def test_the_engine_holds_its_cursor_store_from_construction_and_opens_it_on_first_use(engine, remote):
    from brain.daemon.stores.cursors import CursorStore

    store = engine.cursors
    assert isinstance(store, CursorStore)
    assert not (engine.state_dir / cursors.FILE_NAME).exists()  # nothing opened before a session wakes
    wake(engine, remote, session_id="s")
    assert engine.cursors is store and (engine.state_dir / cursors.FILE_NAME).exists()
    assert store.get(client_of(remote), "s") is not None
