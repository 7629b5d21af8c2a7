"""The facts store's reads: every one takes the viewer it is for and filters inside (docs/architecture.md, "Stores").

A mixin of `SqliteFactsStore` (store.py), which brings `db`, `lock`, `refresh()`,
`catch_up()`, `bad_lines` and, once the model has loaded, `vectors`.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ...indexer.vault.visibility import Viewer
from ..stores.fact_reads import ReadsByScope
from ..stores.fact_ranking import in_rank_order, rank_facts
from ..stores.fact_scope import SqlArgs, active, hides_private, visibility, where_sql
from ..stores.facts import Fact, FactCounts, FactScope, Order
from .rows import marks, select
from .scope_sql import ORDER_SQL, SQLITE, clauses
from .search import CacheCandidates

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore


class FactReads(ReadsByScope):
    scope_sql = SQLITE
    order_sql = ORDER_SQL
    db: sqlite3.Connection
    lock: threading.RLock
    bad_lines: list[tuple[int, str]]
    vectors: "FactVectorsStore | None"

    if TYPE_CHECKING:
        def refresh(self) -> None: ...  # store.py

        def catch_up(self) -> int: ...  # projection.py

    def select(self, where: list[str], args: SqlArgs, order: str, limit: int | None) -> list[Fact]:
        """Facts matching every clause, in `order`, as the logs say now: for this package's modules
        only (the clauses come from scope_sql.py, the order from its ORDER_SQL)."""
        self.refresh()
        return select(self, where, args, order, limit)

    def ranked(self, query: str, scope: FactScope, viewer: Viewer, limit: int) -> list[Fact]:
        self.refresh()
        where, args = clauses(scope, viewer)
        ids = rank_facts(CacheCandidates(self, self.vectors, where, args, scope.narrows()), self.vectors, query, limit)
        if not ids:
            return []
        return in_rank_order(select(self, [*where, f"id IN ({marks(ids)})"], [*args, *ids], ORDER_SQL[Order.ID], None),
                             ids)

    def count(self, scope: FactScope, viewer: Viewer, cap: int) -> int:
        where, args = clauses(scope, viewer)
        sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM facts{where_sql(where)} LIMIT ?)"
        self.refresh()
        with self.lock:
            n: int = self.db.execute(sql, [*args, cap]).fetchone()[0]
        return n

    def counts(self, viewer: Viewer) -> FactCounts:
        world = visibility(viewer)
        live, now = active(SQLITE)
        self.refresh()
        with self.lock:
            total: int = self.db.execute(f"SELECT COUNT(*) FROM facts{where_sql(world)}").fetchone()[0]
            active_n: int = self.db.execute(f"SELECT COUNT(*) FROM facts{where_sql([*live, *world])}",
                                            now).fetchone()[0]
        return {"facts": total, "active_facts": active_n, "bad_log_lines": len(self.bad_lines)}

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
