"""Connections to one PostgreSQL database, shared by a store's threads.

A front end answers several calls at once, so a store keeps a few idle
connections and lends one per call; a connection the server dropped (a
restart, a killed backend) is closed instead of going back. The first
connection applies the schema's pending migrations (schema.py), so a front end
started against an empty database makes its tables.

A thread may hold one connection for a while (`held`): the facts store's
`exclusive()` keeps its transaction, and the advisory lock in it, on that
connection, and every call the thread makes meanwhile runs there too.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

import psycopg

from ..protocol.errors import Unavailable
from . import schema

IDLE_KEPT = 8            # idle connections kept for the next calls
CONNECT_TIMEOUT_S = 10
RECHECK_IDLE_S = 2.0     # an idle connection older than this is asked whether it still answers


class Connections:
    """Lends connections to `dsn`; `migrated` once the schema is in force."""

    def __init__(self, dsn: str, *, migrate: bool = True, settings: dict[str, str] | None = None):
        self.dsn = dsn
        # server settings for this store's sessions (libpq `options`), e.g. the HNSW scan's
        self._options = " ".join(f"-c {k}={v}" for k, v in (settings or {}).items())
        self._idle: list[tuple[psycopg.Connection, float]] = []   # (connection, when it went idle)
        self._lock = threading.Lock()
        self._held = threading.local()
        self.migrated = not migrate
        self._closed = False

    def _open(self) -> psycopg.Connection:
        # autocommit: a read is its own statement; a write says BEGIN and COMMIT itself
        conn = psycopg.connect(self.dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True, options=self._options)
        if not self.migrated:
            try:
                schema.migrate(conn)
            except schema.SchemaTooNew as e:
                conn.close()
                # an agent's call gets the reason and the fix, not an internal error (docs/scaling.md)
                raise Unavailable(str(e), "Upgrade brain on this host to the version the indexer runs, then "
                                          "restart this front end.") from None
            except BaseException:
                conn.close()
                raise
            self.migrated = True
        return conn

    def _idle_one(self) -> psycopg.Connection | None:
        """An idle connection that still answers: one idle for a while is asked first, so a
        server restart or a dropped session costs a new connection, not the caller's call."""
        while True:
            with self._lock:
                if not self._idle:
                    return None
                conn, since = self._idle.pop()
            if time.monotonic() - since < RECHECK_IDLE_S:
                return conn
            try:
                conn.execute("SELECT 1")
                return conn
            except psycopg.Error:
                conn.close()

    def held(self) -> psycopg.Connection | None:
        """The connection this thread holds (inside `hold`), if any."""
        conn: psycopg.Connection | None = getattr(self._held, "conn", None)
        return conn

    @contextmanager
    def borrow(self) -> Iterator[psycopg.Connection]:
        """A connection for one call: the thread's held one, else an idle or a new one.

        Connections are in autocommit mode: a write opens and commits its own
        transaction, and one left open by a failure is rolled back here.
        """
        mine = self.held()
        if mine is not None:
            yield mine
            return
        conn = self._idle_one() or self._open()
        try:
            yield conn
        finally:
            self._give_back(conn)

    @contextmanager
    def hold(self) -> Iterator[psycopg.Connection]:
        """Keep one connection for this thread until the block ends (re-entrant)."""
        mine = self.held()
        if mine is not None:
            yield mine
            return
        with self.borrow() as conn:
            self._held.conn = conn
            try:
                yield conn
            finally:
                self._held.conn = None

    def _give_back(self, conn: psycopg.Connection) -> None:
        """Idle again, or closed when the server dropped it or it cannot be rolled back."""
        try:
            if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.rollback()
        except psycopg.Error:
            conn.close()
        if conn.closed or conn.broken:
            conn.close()
            return
        with self._lock:
            if not self._closed and len(self._idle) < IDLE_KEPT:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _since in idle:
            conn.close()
