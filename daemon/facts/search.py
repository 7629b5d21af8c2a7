"""What facts ranking reads from the facts cache: the candidates of the ranking both facts stores
share (daemon/stores/fact_ranking.py; docs/architecture.md, "Facts ranking"), in SQLite.

- keyword: BM25 over `facts_fts` (SQLite FTS5 in the facts cache, Porter
  stemming), which holds each fact's text and its date words
  (`stores/fact_dates.py`). It lives in the same database and is written in
  the same transaction as the facts row, so a fact is searchable the moment
  `remember` returns and a cache rebuild recreates it from the log.
- vector: cosine to the fact vectors (`indexer/embeddings/fact_vectors.py`)
  once the embedding model has loaded.

Every filter (scope, active, world-only, grep) is SQL applied before the
limit, so a remote caller's ranking never touches a private row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..stores.fact_neighbours import both_ways
from ..stores.fact_ranking import COMMON_WINDOW, DATE_WEIGHT, TEXT_WEIGHT, common_cap, common_in
from ..stores.fact_scope import SqlArgs, where_sql
from .neighbours import neighbours
from .rows import Cache, marks

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore, Vector

SCOPE_CAP = 20_000     # most facts a scoped vector search scores
_ORDER = f"bm25(facts_fts, {TEXT_WEIGHT}, {DATE_WEIGHT}), facts_fts.rowid DESC"
_SCORE = f"-bm25(facts_fts, {TEXT_WEIGHT}, {DATE_WEIGHT})"
Scored = Sequence[tuple[int, float]]


class CacheCandidates:
    """fact_ranking.FactCandidates over the facts cache, for one scope's clauses (`where`, `args`);
    `scoped` when the scope narrows beyond the common filters (FactScope.narrows)."""

    def __init__(self, cache: Cache, vectors: "FactVectorsStore | None", where: list[str], args: SqlArgs,
                 scoped: bool):
        self.cache, self.vectors, self.where, self.args, self.scoped = cache, vectors, where, args, scoped

    def _rows(self, sql: str, args: SqlArgs) -> list[tuple[int, float]]:
        with self.cache.lock:
            return [(r[0], r[1]) for r in self.cache.db.execute(sql, args).fetchall()]

    def common_words(self, words: list[str]) -> list[str]:
        if not words:
            return []
        db = self.cache.db
        with self.cache.lock:
            # the window by save time: ids are minted per device (docs/architecture.md, "Fact ids"),
            # so the latest facts are not the highest ids
            row = db.execute(f"SELECT created_at FROM facts{where_sql(self.where)} ORDER BY created_at DESC, "
                             "id DESC LIMIT 1 OFFSET ?", [*self.args, COMMON_WINDOW - 1]).fetchone()
            where = where_sql((["facts.created_at >= ?"] if row else []) + self.where) or " WHERE 1"
            args = ([row[0]] if row else []) + list(self.args)
            total: int = db.execute(f"SELECT COUNT(*) FROM facts{where}", args).fetchone()[0]
            cap = common_cap(total)
            sql = (f"SELECT COUNT(*) FROM (SELECT 1 FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
                   f"{where} AND facts_fts MATCH ? LIMIT ?)")
            return common_in(((w, db.execute(sql, [*args, f'text : "{w}"', cap]).fetchone()[0]) for w in words),
                             total)

    def keyword(self, words: list[str], depth: int) -> dict[int, float]:
        if not words:
            return {}
        expr = " OR ".join(f'"{w}"' for w in words)   # FTS5: any of them
        if self.scoped:
            sql = (f"SELECT facts.id, {_SCORE} FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
                   f"{where_sql(['facts_fts MATCH ?', *self.where])} ORDER BY {_ORDER} LIMIT ?")
            return dict(self._rows(sql, [expr, *self.args, depth]))
        # only the common filters: rank the index alone (half the cost of the join), then filter
        top = f"SELECT rowid, {_SCORE} FROM facts_fts WHERE facts_fts MATCH ? ORDER BY {_ORDER} LIMIT ?"
        return dict(self._filtered_top(lambda k: self._rows(top, [expr, k]), depth))

    def nearest(self, qv: "Vector", depth: int) -> dict[int, float]:
        vectors = self.vectors
        if vectors is None:
            return {}
        if self.scoped:
            # a scope (entity, session, since, grep) is usually small: score exactly its facts
            with self.cache.lock:
                ids = [r[0] for r in self.cache.db.execute(
                    f"SELECT id FROM facts{where_sql(self.where)} ORDER BY valid_from DESC, id DESC LIMIT ?",
                    [*self.args, SCOPE_CAP])]
            return dict(vectors.search(qv, depth, ids)) if ids else {}
        return dict(self._filtered_top(lambda k: vectors.search(qv, k), depth))

    def cosines(self, qv: "Vector", ids: set[int]) -> dict[int, float]:
        return self.vectors.cosines(qv, sorted(ids)) if self.vectors is not None else {}

    def neighbours(self, ids: list[int]) -> dict[int, dict[int, int]]:
        return both_ways(neighbours(self.cache, ids))

    def in_scope(self, ids: set[int]) -> set[int]:
        if not ids:
            return set()
        id_list = sorted(ids)
        where = where_sql([f"id IN ({marks(id_list)})", *self.where])
        with self.cache.lock:
            return {r[0] for r in self.cache.db.execute(f"SELECT id FROM facts{where}", [*id_list, *self.args])}

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        if not ids:
            return []
        with self.cache.lock:
            return [(r[0], r[1]) for r in self.cache.db.execute(
                f"SELECT id, fact FROM facts WHERE id IN ({marks(ids)})", sorted(ids)).fetchall()]

    def _filtered_top(self, top: Callable[[int], Scored], depth: int) -> Scored:
        """The best `depth` of `top(k)` (id, score) in scope; k widens while the scope removes
        too many (expired or, for a remote caller, private facts)."""
        k = depth * 4
        while True:
            hits = top(k)
            keep = self.in_scope({fid for fid, _ in hits})
            ranked = [(fid, score) for fid, score in hits if fid in keep]
            if len(ranked) >= depth or len(hits) < k:
                return ranked[:depth]
            k *= 4
