"""The page tables' chunks as the chunk vectors read them (embeddings/chunk_source.py).

The vectors read on threads of their own (the build, the live worker, a
query), so this holds its own connection to the page database when it has a
file: reads get a consistent snapshot and never interleave with another
thread's transaction on a shared connection. An in-memory database has no
file to open again and is read through the connection given.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def _sqlite_path(db: sqlite3.Connection | str | Path) -> str | None:
    if isinstance(db, (str, Path)):
        return str(db)
    row = db.execute("PRAGMA database_list").fetchone()
    return row[2] or None


class ChunkRows:
    """The chunks table (db.py) read for the vectors; `close` closes the connection it opened."""

    def __init__(self, db: sqlite3.Connection | str | Path):
        path = _sqlite_path(db)
        if path:
            self.db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._own_db = True
        else:
            assert isinstance(db, sqlite3.Connection)   # only a connection can lack a file
            self.db = db
            self._own_db = False

    def chunk_hashes(self) -> dict[int, str]:
        return {int(cid): h for cid, h in self.db.execute("SELECT id, hash FROM chunks").fetchall()}

    def chunks_carrying(self, hashes: list[str]) -> list[tuple[int, str, int, int]]:
        marks = ",".join("?" * len(hashes))
        return self.db.execute(
            f"SELECT id, hash, page_id, ord FROM chunks WHERE hash IN ({marks}) ORDER BY id", hashes).fetchall()

    def chunk_texts(self, hashes: list[str]) -> list[tuple[str, str, str]]:
        marks = ",".join("?" * len(hashes))
        return self.db.execute(
            f"SELECT hash, heading, text FROM chunks WHERE hash IN ({marks}) GROUP BY hash", hashes).fetchall()

    def hashes_by_page(self) -> list[tuple[int, str]]:
        return self.db.execute("SELECT page_id, hash FROM chunks ORDER BY page_id, ord").fetchall()

    def page_orders(self) -> tuple[list[int], list[int], list[int]]:
        recent = [r[0] for r in self.db.execute("SELECT id FROM pages ORDER BY updated_at DESC, id")]
        linked = [r[0] for r in self.db.execute(
            "SELECT to_id FROM links WHERE to_id IS NOT NULL GROUP BY to_id "
            "ORDER BY COUNT(DISTINCT from_id) DESC, to_id")]
        retrieved = [r[0] for r in self.db.execute(
            "SELECT id FROM pages WHERE last_retrieved_at IS NOT NULL ORDER BY last_retrieved_at DESC, id")]
        return recent, linked, retrieved

    def close(self) -> None:
        if self._own_db:
            self.db.close()
