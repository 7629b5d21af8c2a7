"""The facts store's reads: every one takes the viewer it is for and filters inside (docs/architecture.md, "Stores").

A mixin of `FactsStore` (store.py), which brings `db`, `lock`, `refresh()`,
`catch_up()`, `bad_lines` and, once the model has loaded, `vectors`.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Sequence

from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from ..stores.facts import Fact, FactCounts, FactScope
from .schema import COLUMNS
from .scope_sql import ORDER_SQL, SqlArgs, clauses, hides_private

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore


def as_fact(row: Sequence[object]) -> Fact:
    """A `facts` row read with COLUMNS as a Fact (the columns are the fields, in order)."""
    return Fact(*row)  # type: ignore[arg-type]


class FactReads:
    db: sqlite3.Connection
    lock: threading.RLock
    bad_lines: list[tuple[int, str]]
    vectors: "FactVectorsStore | None"

    if TYPE_CHECKING:
        def refresh(self) -> None: ...  # store.py

        def catch_up(self) -> int: ...  # projection.py

    def select(self, where: list[str], args: SqlArgs, order: str, limit: int | None) -> list[Fact]:
        """Facts matching every clause, in `order`: for this package's modules only (the
        clauses come from scope_sql.py, the order from its ORDER_SQL)."""
        self.refresh()
        sql = f"SELECT {COLUMNS} FROM facts"
        if where:
            sql += " WHERE " + " AND ".join(f"({c})" for c in where)
        sql += f" ORDER BY {order}"
        params = list(args)
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.lock:
            cur = self.db.cursor()
            cur.row_factory = None  # plain tuples: a Fact is built from each (sqlite3.Row costs twice as much)
            return [as_fact(r) for r in cur.execute(sql, params).fetchall()]

    def get(self, fid: int, viewer: Viewer) -> Fact | None:
        self.refresh()
        sql = f"SELECT {COLUMNS} FROM facts WHERE id=?" + (" AND visibility = 'world'" if hides_private(viewer) else "")
        with self.lock:
            row = self.db.execute(sql, (fid,)).fetchone()
        return as_fact(row) if row else None

    def listed(self, scope: FactScope, viewer: Viewer, limit: int | None) -> list[Fact]:
        where, args = clauses(scope, viewer)
        return self.select(where, args, ORDER_SQL[scope.order], limit)

    def ranked(self, query: str, scope: FactScope, viewer: Viewer, limit: int) -> list[Fact]:
        from .search import rank_facts

        return rank_facts(self, self.vectors, query, scope, viewer, limit)

    def count(self, scope: FactScope, viewer: Viewer, cap: int) -> int:
        where, args = clauses(scope, viewer)
        sql = "SELECT COUNT(*) FROM (SELECT 1 FROM facts"
        if where:
            sql += " WHERE " + " AND ".join(f"({c})" for c in where)
        self.refresh()
        with self.lock:
            n: int = self.db.execute(sql + " LIMIT ?)", [*args, cap]).fetchone()[0]
        return n

    def counts(self, viewer: Viewer) -> FactCounts:
        world = " AND visibility = 'world'" if hides_private(viewer) else ""
        self.refresh()
        with self.lock:
            total = self.db.execute("SELECT COUNT(*) FROM facts WHERE 1=1" + world).fetchone()[0]
            active = self.db.execute(
                "SELECT COUNT(*) FROM facts WHERE expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)"
                + world, (now_iso(),),
            ).fetchone()[0]
        return {"facts": total, "active_facts": active, "bad_log_lines": len(self.bad_lines)}

    def by_call_key(self, key: str, viewer: Viewer) -> Fact | None:
        with self.lock:
            self.catch_up()  # the key may be in lines another process appended
            row = self.db.execute("SELECT fact_id FROM call_keys WHERE key=?", (key,)).fetchone()
            return self.get(row[0], viewer) if row else None

    def supersedes(self, fid: int, viewer: Viewer) -> bool:
        if hides_private(viewer) and self.get(fid, viewer) is None:
            return False  # a fact the viewer may not see supersedes nothing it may know of
        with self.lock:
            return self.db.execute("SELECT 1 FROM facts WHERE superseded_by=? LIMIT 1", (fid,)).fetchone() is not None

    def exclusive(self) -> AbstractContextManager[object]:
        return self.lock
