"""The facts store contract (daemon/stores/facts.py) on PostgreSQL: `PgFactsStore`.

Any number of front ends share one database (docs/scaling.md, "Past one
machine"). What keeps them consistent:

- **Durable before acknowledged.** `insert` returns once its transaction has
  committed: the fact, its call key and the expiry of the fact it supersedes,
  all or none. Ids come from a sequence, so two front ends never mint the same one.
- **One writer decides at a time.** Every write takes one transaction-scoped
  advisory lock (FACTS_LOCK), and `exclusive()` holds it in an open
  transaction, so remember's replay check, dedup and insert on one front end
  never interleave with another's. A connection that dies drops its lock and
  its unfinished transaction with it: no half fact stays behind.
- **Visibility inside every read.** Each query carries the viewer's clause
  (facts_scope_sql.py): a viewer that may not see private facts never gets one,
  nor a count or a ranking that depends on one (docs/protocol.md §4.8).

The vault's facts log stays the user's record, but this store never writes
the vault: the indexer exports what `facts_since` returns (docs/scaling.md,
"Which process owns which write").
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, TypeVar

import psycopg

from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from ..protocol.errors import InvalidParams, Unavailable
from ..stores.fact_dates import date_words
from ..stores.fact_reads import ReadsByScope
from ..stores.fact_ranking import in_rank_order, rank_facts
from ..stores.fact_scope import COLUMNS, SqlArgs, as_fact, normalize_text, visibility, where_sql
from ..stores.facts import Fact, FactCounts, FactScope, Order
from .connections import Connections
from .facts_scope_sql import ORDER_SQL, POSTGRES, active, clauses, storable
from .facts_search import PgCandidates
from .facts_vector_rows import FactVectorRows
from .page_load import words
from .schema import MIGRATION_LOCK

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore

FACTS_LOCK = MIGRATION_LOCK + 1
# the keyword document: the text's words weigh A, its date words D (facts_search.py ranks with them)
DOCUMENT = "setweight(to_tsvector('english', %s), 'A') || setweight(to_tsvector('english', %s), 'D')"
# the settings of this store's sessions: a filtered HNSW scan goes on until it has its LIMIT (pgvector 0.8)
SESSION = {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "100"}
T = TypeVar("T")

_INSERT = f"""
INSERT INTO facts (fact, norm, folded, kind, entity_slug, visibility, source, source_session, context,
                   confidence, notability, valid_from, valid_until, created_at, document)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 1.0, 'medium', %s, %s, %s, {DOCUMENT})
RETURNING id
"""
# the earliest expiry wins, as in the embedded projection
_EXPIRE = """
UPDATE facts SET expired_at = %s, expire_reason = %s, superseded_by = COALESCE(%s, superseded_by),
                 change = nextval('facts_change_seq')
WHERE id = %s AND (expired_at IS NULL OR expired_at > %s)
"""

# the new fact's words counted (facts_search.py reads the counts as BM25's document frequencies)
_COUNT_WORDS = """
INSERT INTO fact_lexemes (lexeme, facts) SELECT lexeme, 1 FROM unnest((SELECT document FROM facts WHERE id = %s))
ON CONFLICT (lexeme) DO UPDATE SET facts = fact_lexemes.facts + 1
"""
_RECOUNT_WORDS = """
DELETE FROM fact_lexemes;
INSERT INTO fact_lexemes (lexeme, facts) SELECT lexeme, count(*) FROM facts, unnest(document) GROUP BY lexeme
"""
_FORGET = """
UPDATE facts SET expired_at = %s, expire_reason = %s, change = nextval('facts_change_seq')
WHERE id = %s AND expired_at IS NULL
"""


def stored_key(key: str) -> str:
    """A call key as the table holds it: one PostgreSQL text cannot hold (a NUL, a lone surrogate)
    is kept as its digest, the same for every retry of the call."""
    if storable(key):
        return key
    return "digest:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class _AlreadyWritten(Exception):
    """The call key was taken meanwhile: the insert is undone and the first fact's id answers."""

    def __init__(self, fid: int):
        super().__init__(fid)
        self.fid = fid


class PgFactsStore(ReadsByScope, FactVectorRows):
    """The facts of one brain in a PostgreSQL database (`dsn`), shared by every front end on it."""

    scope_sql = POSTGRES
    order_sql = ORDER_SQL

    def __init__(self, dsn: str, *, connections: Connections | None = None):
        self.connections = connections or Connections(dsn, settings=SESSION)
        self.vectors: "FactVectorsStore | None" = None
        self.bad_lines: list[tuple[int, str]] = []   # no log is read here
        self._local = threading.local()

    # -- connections -----------------------------------------------------------

    @contextmanager
    def conn(self, *, hold: bool = False) -> Iterator[psycopg.Connection]:
        """A connection for one call (the thread's own inside `exclusive()`; with `hold`, kept as
        the thread's own until the block ends); an unreachable server is `Unavailable`, naming the fix."""
        try:
            with (self.connections.hold() if hold else self.connections.borrow()) as conn:
                yield conn
        except psycopg.OperationalError as e:
            raise Unavailable("the facts store's PostgreSQL cannot be reached; nothing was read or written",
                              suggestion="check that the database server is up and the store URL is right, "
                                         "then retry") from e

    def _exclusive_depth(self) -> int:
        depth: int = getattr(self._local, "depth", 0)
        return depth

    @contextmanager
    def _exclusive(self) -> Iterator[object]:
        depth = self._exclusive_depth()
        if depth:
            self._local.depth = depth + 1
            try:
                yield self
            finally:
                self._local.depth = depth
            return
        with self.conn(hold=True) as conn:
            self._lock_in_transaction(conn)
            self._local.depth = 1
            try:
                yield self
            except BaseException:
                _quiet_rollback(conn)
                raise
            finally:
                self._local.depth = 0
            conn.execute("COMMIT")

    def exclusive(self) -> AbstractContextManager[object]:
        return self._exclusive()

    @staticmethod
    def _lock_in_transaction(conn: psycopg.Connection) -> None:
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (FACTS_LOCK,))

    def _write(self, work: Callable[[psycopg.Connection], T]) -> T:
        """Run `work` in a committed transaction holding the facts lock. Inside `exclusive()`
        it is the exclusive transaction that commits (durable before the call returns); a new
        one, holding the lock again, carries the rest of the block."""
        with self.conn() as conn:
            inside = self._exclusive_depth() > 0
            if not inside:
                self._lock_in_transaction(conn)
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                _quiet_rollback(conn)
                if inside:
                    _quiet(lambda: self._lock_in_transaction(conn))
                raise
            if inside:
                _quiet(lambda: self._lock_in_transaction(conn))
            return result

    # -- reading ---------------------------------------------------------------

    def select(self, where: list[str], args: SqlArgs, order: str, limit: int | None) -> list[Fact]:
        """Facts matching every clause, in `order`: for this package's modules only (the clauses
        come from facts_scope_sql.py, the order from its ORDER_SQL)."""
        sql = f"SELECT {COLUMNS} FROM facts{where_sql(where)} ORDER BY {order}"
        params = list(args)
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        with self.conn() as conn:
            return [as_fact(r) for r in conn.execute(sql, params).fetchall()]

    def ranked(self, query: str, scope: FactScope, viewer: Viewer, limit: int) -> list[Fact]:
        where, args = clauses(scope, viewer)
        with self.conn() as conn:
            ids = rank_facts(PgCandidates(conn, self.vectors, where, args), self.vectors, query, limit)
        if not ids:
            return []
        return in_rank_order(self.select([*where, "id = ANY(%s)"], [*args, ids], ORDER_SQL[Order.ID], None), ids)

    def count(self, scope: FactScope, viewer: Viewer, cap: int) -> int:
        where, args = clauses(scope, viewer)
        with self.conn() as conn:
            row = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM facts{where_sql(where)} LIMIT %s) capped",
                               [*args, cap]).fetchone()
        return int(row[0]) if row else 0

    def counts(self, viewer: Viewer) -> FactCounts:
        live, now = active()
        with self.conn() as conn:
            row = conn.execute(f"SELECT count(*), count(*) FILTER (WHERE {live[0]}) FROM facts"
                               f"{where_sql(visibility(viewer))}", now).fetchone()
        total, active_n = (int(row[0]), int(row[1])) if row else (0, 0)
        return {"facts": total, "active_facts": active_n, "bad_log_lines": 0}

    def by_call_key(self, key: str, viewer: Viewer) -> Fact | None:
        rows = self.select(["id = (SELECT fact_id FROM call_keys WHERE key = %s)", *visibility(viewer)],
                           [stored_key(key)], "id", 1)
        return rows[0] if rows else None

    def home_of(self, name: str) -> str | None:
        """Facts stay under the name they were filed under here: a shared store does not follow
        page moves yet (docs/scaling.md, "What a team brain does not do yet")."""
        return None

    def record_moves(self, moves: list[tuple[str, str]], why: str) -> int:
        return 0   # a shared store does not move facts yet (docs/scaling.md)

    def count_filed(self, name: str, viewer: Viewer) -> int:
        return self.count(FactScope(entity=name), viewer, 1 << 30)

    def filed_without_page(self, viewer: Viewer) -> list[tuple[str, int]]:
        return []

    def supersedes(self, fid: int, viewer: Viewer) -> bool:
        # a fact the viewer may not see supersedes nothing it may know of
        sql = f"SELECT EXISTS (SELECT 1 FROM facts{where_sql(['id = %s', *visibility(viewer)])}) " \
              "AND EXISTS (SELECT 1 FROM facts WHERE superseded_by = %s)"
        with self.conn() as conn:
            row = conn.execute(sql, (fid, fid)).fetchone()
        return bool(row and row[0])

    def facts_since(self, position: int, limit: int = 1000) -> list[tuple[int, Fact]]:
        """(position, fact) of every fact inserted or expired after `position`, in the order of
        the writes, private ones included: what the indexer exports to the vault's facts log
        (docs/scaling.md, "Which process owns which write"). Start from 0; each fact appears at
        its last write, so an expired fact comes again with `expired_at` set. Positions grow in
        commit order: every write holds the facts lock until it has committed."""
        with self.conn() as conn:
            rows = conn.execute(f"SELECT change, {COLUMNS} FROM facts WHERE change > %s ORDER BY change LIMIT %s",
                                (position, limit)).fetchall()
        return [(int(r[0]), as_fact(r[1:])) for r in rows]

    # -- writing ---------------------------------------------------------------

    def insert(self, *, fact: str, kind: str, entity_slug: str | None, visibility: str, source: str,
               valid_until: str | None, source_session: str | None = None, context: str | None = None,
               supersede: int | None = None, now: str | None = None, call_key: str | None = None) -> int:
        """Record a new fact and, in the same transaction, the expiry of the one it supersedes;
        returns once committed. A call key already taken answers with its fact's id, writing nothing."""
        ts = now or now_iso()
        fields = {"fact": fact, "kind": kind, "entity": entity_slug, "visibility": visibility, "source": source,
                  "session_id": source_session, "context": context, "valid_until": valid_until, "now": ts}
        bad = [name for name, value in fields.items() if not storable(value)]
        if bad:
            raise InvalidParams(f"{', '.join(bad)} holds a NUL character or a lone surrogate, which this brain's "
                                "store (PostgreSQL) cannot keep", "Remove it and send the call again.")
        key = None if call_key is None else stored_key(call_key)

        def work(conn: psycopg.Connection) -> int:
            row = conn.execute(_INSERT, (fact, normalize_text(fact), fact.lower(), kind, entity_slug, visibility,
                                         source, source_session, context, ts, valid_until, ts,
                                         words(fact), date_words(ts, source, fact))).fetchone()
            assert row is not None
            fid = int(row[0])
            conn.execute(_COUNT_WORDS, (fid,))
            if key is not None:
                taken = conn.execute("INSERT INTO call_keys (key, fact_id) VALUES (%s, %s) "
                                     "ON CONFLICT (key) DO NOTHING RETURNING fact_id", (key, fid)).fetchone()
                if taken is None:
                    first = conn.execute("SELECT fact_id FROM call_keys WHERE key = %s", (key,)).fetchone()
                    raise _AlreadyWritten(int(first[0]) if first else fid)
            if supersede is not None:
                conn.execute(_EXPIRE, (ts, f"superseded by fact #{fid}", fid, supersede, ts))
            return fid

        try:
            return self._write(work)
        except _AlreadyWritten as done:
            return done.fid

    def expire(self, fid: int, reason: str | None) -> bool:
        """Expire a fact, keeping it; False when it already was (or there is none)."""
        ts = now_iso()

        def work(conn: psycopg.Connection) -> bool:
            cur = conn.execute(_FORGET, (ts, reason or "forgotten", fid))
            return cur.rowcount > 0

        return self._write(work)

    def rebuild(self) -> int:
        """Derive every fact's keyword document, normal form and folded text again from its text
        (after an analyzer change). No log is read: here the table is the record, and recreating
        it from the vault's log is the indexer's import (docs/scaling.md); returns 0 lines read."""
        with self.conn() as conn:
            rows = conn.execute("SELECT id, fact, valid_from, source FROM facts").fetchall()

        def work(conn: psycopg.Connection) -> int:
            with conn.cursor() as cur:
                cur.executemany(f"UPDATE facts SET norm = %s, folded = %s, document = {DOCUMENT} WHERE id = %s",
                                [(normalize_text(text), text.lower(), words(text), date_words(valid_from, source, text),
                                  fid) for fid, text, valid_from, source in rows])
            for statement in _RECOUNT_WORDS.strip().split(";"):
                conn.execute(statement)
            return 0

        return self._write(work)

    def vectors_current(self, model_id: str) -> bool:
        """Whether every active fact filed under an entity has a vector made by `model_id` from its
        current text (`brain index` then has no fact left to embed)."""
        from ...indexer.embeddings.fact_vectors import all_current  # numpy: loaded when asked

        facts = self.listed(FactScope(filed=True, order=Order.ID), Viewer.owner(), None)
        return all_current(self.vector_keys(), facts, model_id)

    def attach_vectors(self, vectors: "FactVectorsStore") -> None:
        """Rank by meaning too from now on (facts_search.py); until then ranking is by keyword."""
        self.vectors = vectors

    def close(self) -> None:
        self.connections.close()


def _quiet(step: Callable[[], object]) -> None:
    try:
        step()
    except psycopg.Error:
        pass   # the connection is gone: returning it closes it


def _quiet_rollback(conn: psycopg.Connection) -> None:
    if not conn.closed and not conn.broken:
        _quiet(lambda: conn.execute("ROLLBACK"))
