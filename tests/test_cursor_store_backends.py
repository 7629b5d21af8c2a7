"""The cursor store contract (daemon/stores/cursors.py) on both backends: the embedded SQLite
file (daemon/server/cursor_store.py) and PostgreSQL (daemon/postgres/cursors_store.py, on
the test session's real server). Same rows, same caps, same garbage collection, both fail open."""

from __future__ import annotations

import sqlite3
import time

import pytest

from brain.daemon.server import cursor_store as embedded
from brain.daemon.stores.cursors import Cursor, CursorStore
from page_seed import days_ago, now


class Backend:
    """Opens stores on one place (a file, a database), and ages every row in it."""

    def __init__(self, module, open_store, age):
        self.module, self.open, self.age = module, open_store, age


@pytest.fixture(params=["embedded", "postgres"])
def backend(request, tmp_path):
    if request.param == "embedded":
        path = tmp_path / "c.sqlite"

        def age(days):
            db = sqlite3.connect(str(path))
            db.execute("UPDATE cursors SET touched_at = ?", (days_ago(days),))
            db.commit()
            db.close()

        yield Backend(embedded, lambda: embedded.SQLiteCursorStore(path), age)
        return
    import psycopg

    from brain.daemon.postgres import cursors_store as pg

    dsn = request.getfixturevalue("pg_migrated_dsn")

    def age(days):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("UPDATE cursors SET touched_at = %s", (days_ago(days),))

    yield Backend(pg, lambda: pg.PgCursorStore(dsn), age)


def _cursor():
    return Cursor(now(), None, now(), None)


def test_last_writer_wins(backend):
    store = backend.open()
    assert isinstance(store, CursorStore) and store.get("c", "s") is None
    store.put("c", "s", Cursor("2026-01-02T00:00:00.000Z", "b", "2026-01-02T00:00:00.000Z", 9))
    store.put("c", "s", Cursor("2026-01-01T00:00:00.000Z", "a", "2026-01-01T00:00:00.000Z", None))
    assert store.get("c", "s") == Cursor("2026-01-01T00:00:00.000Z", "a", "2026-01-01T00:00:00.000Z", None)
    assert store.get("other", "s") is None  # a client never reads another's namespace


def test_a_session_id_with_nul_and_backslashes_keeps_a_row_of_its_own(backend):
    # delta keeps a session's facts backlog beside its cursor under "<session>\x00facts-backlog";
    # PostgreSQL's text holds no NUL, and "\\0" spelled out must not meet it
    store = backend.open()
    keys = ["s\x00facts-backlog", "s\\0facts-backlog", "s\\\x00facts-backlog", "s"]
    for n, key in enumerate(keys):
        assert store.put("c", key, Cursor(now(), f"slug-{n}", now(), n))
    assert [store.get("c", key).slug for key in keys] == [f"slug-{n}" for n in range(len(keys))]


def test_a_long_session_id_is_one_row_found_again(backend):
    store = backend.open()
    long_a, long_b = "x" * 5000 + "a", "x" * 5000 + "b"
    store.put("c", long_a, Cursor(now(), "a", now(), 1))
    store.put("c", long_b, Cursor(now(), "b", now(), 2))
    assert store.get("c", long_a).slug == "a" and store.get("c", long_b).slug == "b"


def test_each_client_keeps_at_most_the_newest_rows(backend, monkeypatch):
    monkeypatch.setattr(backend.module, "MAX_ROWS_PER_CLIENT", 5)
    store = backend.open()
    for i in range(8):
        store.put("busy", f"s{i}", _cursor())
        time.sleep(0.002)
    store.put("quiet", "only", _cursor())
    assert store.count("busy") == 5 and store.count("quiet") == 1
    assert store.get("busy", "s0") is None and store.get("busy", "s7") is not None


def test_a_flood_over_many_client_ids_evicts_only_the_biggest(backend, monkeypatch):
    from brain.daemon.stores import cursor_limits

    monkeypatch.setattr(cursor_limits, "MAX_ROWS_TOTAL", 20)   # the limit both stores keep
    store = backend.open()
    store.put("stdio:quiet", "mine", _cursor())
    for i in range(40):  # ten flooding ids, four sessions each
        store.put(f"socket:flood-{i % 10}", f"s{i}", _cursor())
        time.sleep(0.002)
    assert store.count() == 20
    assert store.get("stdio:quiet", "mine") is not None


def test_idle_cursors_go_when_a_store_opens_and_on_gc(backend):
    store = backend.open()
    store.put("c", "old", _cursor())
    store.close()
    backend.age(30)
    assert backend.open().count() == 0  # opening collects
    store = backend.open()
    store.put("c", "a", _cursor())
    store.put("c", "b", _cursor())
    backend.age(8)
    store.put("c", "fresh", _cursor())
    assert store.gc() == 2 and store.get("c", "fresh") is not None


def test_two_front_ends_share_the_cursors(pg_migrated_dsn):
    """A session that wakes through another front end resumes where it stopped."""
    from brain.daemon.postgres.cursors_store import PgCursorStore

    one, two = PgCursorStore(pg_migrated_dsn), PgCursorStore(pg_migrated_dsn)
    one.put("tok", "s", Cursor("2026-01-02T00:00:00.000Z", "b", "2026-01-02T00:00:00.000Z", 7))
    assert two.get("tok", "s") == Cursor("2026-01-02T00:00:00.000Z", "b", "2026-01-02T00:00:00.000Z", 7)
    one.close()
    two.close()


def test_an_unreachable_database_fails_open(pg_server, tmp_path):
    from brain.daemon.postgres.cursors_store import PgCursorStore

    store = PgCursorStore(f"host={tmp_path} port=5432 user=postgres dbname=postgres")  # no server there
    assert store.get("c", "s") is None
    assert store.put("c", "s", _cursor()) is False
    assert store.gc() == 0
