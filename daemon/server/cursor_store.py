"""delta's session cursors in SQLite: the embedded CursorStore (daemon/stores/cursors.py).

A small SQLite file in the vault's state dir, opened on first use. Each row
holds two keysets, one per stream: pages by (updated_at, slug) and facts by
(created_at, id), so a wake that had to stop early (page cap, fact cap,
budget) resumes exactly where delivery stopped. Last writer wins. Rows idle
for more than 7 days are removed when the store opens and on every first
wake; each client keeps at most 1,000 rows, oldest evicted, and past 50,000
rows in all the client holding the most loses its oldest: no client's burst
evicts another's (the limits both cursors stores keep: daemon/stores/cursor_limits.py).

Everything here fails open: a broken or unwritable store makes delta behave
as if no cursor existed, never makes it fail.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from ...indexer.vault.timestamps import iso, utcnow
from ..stores.cursor_limits import MAX_ROWS_PER_CLIENT, SOURCE, cap_total, idle_cutoff
from ..stores.cursors import Cursor
from ..verbs.cursors import bounded

log = logging.getLogger("brain.cursors")

FILE_NAME = "delta_cursors.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cursors (
    source TEXT NOT NULL,
    client_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    since TEXT NOT NULL,          -- pages keyset: updated_at ...
    slug TEXT,                    -- ... and slug ("" = the whole bucket at since, NULL = strictly after it)
    facts_since TEXT NOT NULL,    -- facts keyset: created_at ...
    facts_id INTEGER,             -- ... and id (NULL = strictly after facts_since)
    touched_at TEXT NOT NULL,
    PRIMARY KEY (source, client_id, session_id)
);
CREATE INDEX IF NOT EXISTS cursors_client ON cursors(source, client_id, touched_at);
CREATE INDEX IF NOT EXISTS cursors_touched ON cursors(touched_at);
"""
_BIGGEST = "SELECT source, client_id, COUNT(*) AS n FROM cursors GROUP BY source, client_id ORDER BY n DESC LIMIT 1"
_CUT_OLDEST = ("DELETE FROM cursors WHERE rowid IN (SELECT rowid FROM cursors WHERE source = ? AND client_id = ? "
               "ORDER BY touched_at LIMIT ?)")


class SQLiteCursorStore:
    """The cursors of one vault, in `<state dir>/delta_cursors.sqlite`."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=5)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
                self._gc(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def get(self, client_id: str, session_id: str, source: str = SOURCE) -> Cursor | None:
        try:
            with self._lock:
                row = self._conn().execute(
                    "SELECT since, slug, facts_since, facts_id FROM cursors "
                    "WHERE source = ? AND client_id = ? AND session_id = ?",
                    (source, client_id, bounded(session_id)),
                ).fetchone()
        except (sqlite3.Error, OSError):
            log.warning("delta cursor store unreadable (%s); answering without a cursor", self.path, exc_info=True)
            self._reset()
            return None
        return Cursor(*row) if row else None

    def put(self, client_id: str, session_id: str, cursor: Cursor, source: str = SOURCE) -> bool:
        try:
            with self._lock:
                db = self._conn()
                db.execute(
                    "INSERT OR REPLACE INTO cursors VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (source, client_id, bounded(session_id), cursor.since, cursor.slug,
                     cursor.facts_since, cursor.facts_id, iso(utcnow())),
                )
                db.execute(
                    "DELETE FROM cursors WHERE rowid IN (SELECT rowid FROM cursors WHERE source = ? "
                    "AND client_id = ? ORDER BY touched_at DESC LIMIT -1 OFFSET ?)",
                    (source, client_id, MAX_ROWS_PER_CLIENT),
                )
                self._cap_total(db)
            return True
        except (sqlite3.Error, OSError):
            log.warning("delta cursor store unwritable (%s); the cursor was not saved", self.path, exc_info=True)
            self._reset()
            return False

    def gc(self) -> int:
        """Remove cursors idle for more than 7 days; returns how many."""
        try:
            with self._lock:
                return self._gc(self._conn())
        except (sqlite3.Error, OSError):
            log.warning("delta cursor store: gc failed", exc_info=True)
            self._reset()
            return 0

    def count(self, client_id: str | None = None, source: str = SOURCE) -> int:
        with self._lock:
            if client_id is None:
                return self._conn().execute("SELECT COUNT(*) FROM cursors").fetchone()[0]
            return self._conn().execute(
                "SELECT COUNT(*) FROM cursors WHERE source = ? AND client_id = ?", (source, client_id)
            ).fetchone()[0]

    @staticmethod
    def _cap_total(db: sqlite3.Connection) -> None:
        """cursor_limits.cap_total over this file."""
        cap_total(db.execute("SELECT COUNT(*) FROM cursors").fetchone()[0],
                  lambda: db.execute(_BIGGEST).fetchone(), lambda *cut: db.execute(_CUT_OLDEST, cut))

    @staticmethod
    def _gc(db: sqlite3.Connection) -> int:
        return db.execute("DELETE FROM cursors WHERE touched_at < ?", (idle_cutoff(),)).rowcount

    def _reset(self) -> None:
        # drop a broken connection so the next call tries afresh
        db, self._db = self._db, None
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._lock:
            self._reset()
