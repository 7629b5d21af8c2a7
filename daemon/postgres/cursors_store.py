"""delta's session cursors on PostgreSQL: the CursorStore contract (daemon/stores/cursors.py).

The same rows and rules as the embedded store (daemon/server/cursor_store.py;
the limits both keep are daemon/stores/cursor_limits.py):
two keysets per session, last writer wins, rows idle for more than 7 days
collected when the store first connects and by `gc`, each client keeping at
most MAX_ROWS_PER_CLIENT rows and, past MAX_ROWS_TOTAL in all, the client
holding the most losing its oldest. Every front end on the database sees the
same cursors, so a session that wakes through another front end resumes where
it stopped.

Everything here fails open: a server that cannot be reached makes delta
behave as if no cursor existed, never makes it fail.
"""

from __future__ import annotations

import hashlib
import logging
from contextlib import contextmanager
from typing import Iterator

import psycopg

from ...indexer.vault.timestamps import iso, utcnow
from ..stores.cursor_limits import MAX_ROWS_PER_CLIENT, SOURCE, cap_total, idle_cutoff
from ..stores.cursors import Cursor
from .connections import Connections

log = logging.getLogger("brain.cursors")

MAX_KEY = 200   # a session id's length in a row, as daemon/verbs/cursors.py `bounded` keeps it

_PUT = """
INSERT INTO cursors (source, client_id, session_id, since, slug, facts_since, facts_id, touched_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (source, client_id, session_id) DO UPDATE SET
    since = EXCLUDED.since, slug = EXCLUDED.slug, facts_since = EXCLUDED.facts_since,
    facts_id = EXCLUDED.facts_id, touched_at = EXCLUDED.touched_at
"""
_CAP_CLIENT = """
DELETE FROM cursors WHERE (source, client_id, session_id) IN (
    SELECT source, client_id, session_id FROM cursors WHERE source = %s AND client_id = %s
    ORDER BY touched_at DESC OFFSET %s)
"""
_BIGGEST = """
SELECT source, client_id, count(*) AS n FROM cursors GROUP BY source, client_id ORDER BY n DESC LIMIT 1
"""
_CUT_OLDEST = """
DELETE FROM cursors WHERE (source, client_id, session_id) IN (
    SELECT source, client_id, session_id FROM cursors WHERE source = %s AND client_id = %s
    ORDER BY touched_at LIMIT %s)
"""


def bounded(value: str) -> str:
    """At most MAX_KEY characters; a longer value keeps a prefix and a digest (the rule of
    daemon/verbs/cursors.py, so both stores key a session alike). PostgreSQL's text holds no
    NUL, which delta's backlog row names carry (delta_facts.BACKLOG_SUFFIX): backslash and NUL
    are spelled out, backslash first, so two different keys never meet."""
    value = value.replace("\\", "\\\\").replace("\x00", "\\0")
    if len(value) <= MAX_KEY:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return value[: MAX_KEY - len(digest) - 1] + "~" + digest


class PgCursorStore:
    """The cursors of one brain in a PostgreSQL database, shared by every front end on it."""

    def __init__(self, dsn: str, *, connections: Connections | None = None):
        self.connections = connections or Connections(dsn)
        self._collected = False

    @contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection]:
        """A connection; the first one collects idle cursors, as the embedded store does on opening."""
        with self.connections.borrow() as conn:
            if not self._collected:
                self._gc(conn)
                self._collected = True
            yield conn

    def get(self, client_id: str, session_id: str, source: str = SOURCE) -> Cursor | None:
        try:
            with self._borrow() as conn:
                row = conn.execute("SELECT since, slug, facts_since, facts_id FROM cursors "
                                   "WHERE source = %s AND client_id = %s AND session_id = %s",
                                   (source, client_id, bounded(session_id))).fetchone()
        except (psycopg.Error, UnicodeEncodeError):
            log.warning("delta cursor store unreadable; answering without a cursor", exc_info=True)
            return None
        return Cursor(row[0], row[1], row[2], None if row[3] is None else int(row[3])) if row else None

    def put(self, client_id: str, session_id: str, cursor: Cursor, source: str = SOURCE) -> bool:
        try:
            with self._borrow() as conn:
                with conn.transaction():
                    conn.execute(_PUT, (source, client_id, bounded(session_id), cursor.since, cursor.slug,
                                        cursor.facts_since, cursor.facts_id, iso(utcnow())))
                    conn.execute(_CAP_CLIENT, (source, client_id, MAX_ROWS_PER_CLIENT))
                    self._cap_total(conn)
            return True
        except (psycopg.Error, UnicodeEncodeError):  # a value PostgreSQL text cannot hold: not saved
            log.warning("delta cursor store unwritable; the cursor was not saved", exc_info=True)
            return False

    def gc(self) -> int:
        """Remove cursors idle for more than 7 days; returns how many."""
        try:
            with self._borrow() as conn:
                return self._gc(conn)
        except psycopg.Error:
            log.warning("delta cursor store: gc failed", exc_info=True)
            return 0

    def count(self, client_id: str | None = None, source: str = SOURCE) -> int:
        with self._borrow() as conn:
            if client_id is None:
                row = conn.execute("SELECT count(*) FROM cursors").fetchone()
            else:
                row = conn.execute("SELECT count(*) FROM cursors WHERE source = %s AND client_id = %s",
                                   (source, client_id)).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _cap_total(conn: psycopg.Connection) -> None:
        """cursor_limits.cap_total over the shared table."""
        row = conn.execute("SELECT count(*) FROM cursors").fetchone()
        cap_total(int(row[0]) if row else 0, lambda: conn.execute(_BIGGEST).fetchone(),
                  lambda *cut: conn.execute(_CUT_OLDEST, cut))

    @staticmethod
    def _gc(conn: psycopg.Connection) -> int:
        return conn.execute("DELETE FROM cursors WHERE touched_at < %s", (idle_cutoff(),)).rowcount

    def close(self) -> None:
        self.connections.close()
