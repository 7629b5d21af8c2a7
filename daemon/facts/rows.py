"""The facts cache as its reads see it: a connection and the lock around it, and the facts that
match a list of clauses (daemon/facts/scope_sql.py makes them)."""

from __future__ import annotations

import sqlite3
import threading
from typing import Protocol

from ..stores.fact_scope import COLUMNS, SqlArgs, as_fact, where_sql
from ..stores.facts import Fact


class Cache(Protocol):
    db: sqlite3.Connection
    lock: threading.RLock


def select(cache: Cache, where: list[str], args: SqlArgs, order: str, limit: int | None) -> list[Fact]:
    """Facts matching every clause, in `order` (scope_sql.ORDER_SQL's)."""
    sql = f"SELECT {COLUMNS} FROM facts{where_sql(where)} ORDER BY {order}"
    params = list(args)
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    with cache.lock:
        cur = cache.db.cursor()
        cur.row_factory = None  # plain tuples: a Fact is built from each (sqlite3.Row costs twice as much)
        return [as_fact(r) for r in cur.execute(sql, params).fetchall()]


def marks(ids: list[int]) -> str:
    """`?,?,?`: one placeholder per id, for `id IN (…)`."""
    return ",".join("?" * len(ids))
