"""What facts ranking reads from PostgreSQL: the candidates of the ranking both stores share
(docs/architecture.md, "Facts ranking").

The ranking's policy both stores share (daemon/stores/fact_ranking.py: the
query's content and date words, common words, the fusion by score with
neighbours, every constant) is used as it is; only the two arms and the
neighbours are SQL here:

- keyword: each fact's `document` (facts_store.py: its text's words weight A,
  its date words D, English stemming, GIN-indexed). A fact's score is the sum,
  over the query words it holds, of the word's idf over all facts (BM25's
  formula) times PostgreSQL's ts_rank of that word (text 1, dates 0.3, as the
  embedded arm weighs its two columns). ts_rank counts a word's frequency
  without BM25's saturation, and is not damped by the fact's length (facts are
  short; on the tune set, bench/bench_pg_facts.py --set hard-tune, damping by
  1 + log(length) gave MRR 0.321 hybrid and 0.215 keyword-only, none 0.350 and
  0.250): that, and Snowball's English stemmer in place of Porter's, is what
  differs from FTS5.
- vector: cosine to `fact_vectors.embedding` (pgvector, HNSW), made by the
  attached model from the fact's text; a fact whose vector the model is still
  writing (FactVectors.pending) is scored with it all the same, so a recall
  right after a remember on the same front end finds it.

Every clause of the caller's scope and viewer is in each query, so a remote
caller's ranking never reads a private fact.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable

import numpy as np
import psycopg

from ..stores.fact_neighbours import WINDOW, Step, both_ways, walk
from ..stores.fact_ranking import COMMON_WINDOW, DATE_WEIGHT, TEXT_WEIGHT, common_in
from ..stores.fact_scope import SqlArgs, where_sql
from .page_load import vector_text

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore, Vector

# ts_rank's weights in its order {D, C, B, A}: date words, -, -, text
RANK_WEIGHTS = [DATE_WEIGHT, 0.0, 0.0, TEXT_WEIGHT]
RANK_NORMALIZATION = 0   # no damping by length (chosen on the tune set, see above)

# how many facts hold each word (all facts: FTS5's BM25 counts every row too; a word the stemmer
# splits counts as its rarest part), from the counts each insert keeps, and how many facts there are
_DOC_FREQ = """
WITH total AS MATERIALIZED (SELECT count(*) AS n FROM facts)
SELECT t.w, coalesce((SELECT min(coalesce(l.facts, 0)) FROM unnest(to_tsvector('english', t.w)) v
                      LEFT JOIN fact_lexemes l ON l.lexeme = v.lexeme), 0), total.n
FROM unnest(%s::text[]) AS t(w), total
"""
# one term per query word, `idf * ts_rank(weights, document, word)`: each word's tsquery is a
# constant the planner folds once, not parsed again for every row
_TERM = "%s * ts_rank(%s::float4[], document, to_tsquery('english', %s), %s)"
_KEYWORD = "SELECT id, {score} AS score FROM facts{where} ORDER BY score DESC, id DESC LIMIT %s"
# the latest facts in scope, and how many of them hold each word in their text (weight A)
_COMMON = """
WITH recent AS MATERIALIZED (SELECT document FROM facts{where} ORDER BY created_at DESC, id DESC LIMIT %s)
SELECT t.w, (SELECT count(*) FROM recent WHERE document @@ to_tsquery('english', t.w || ':A')),
       (SELECT count(*) FROM recent)
FROM unnest(%s::text[]) AS t(w)
"""
_NEAREST = """
SELECT id, 1 - (embedding <=> %s::vector) FROM fact_vectors
WHERE starts_with(model, %s) AND id IN (SELECT id FROM facts{where})
ORDER BY embedding <=> %s::vector LIMIT %s
"""
_COSINES = "SELECT id, 1 - (embedding <=> %s::vector) FROM fact_vectors WHERE id = ANY(%s) AND starts_with(model, %s)"
# the facts saved up to WINDOW turns before and after each one, in its conversation, with how many
# turns away each is (daemon/stores/fact_neighbours.py): by session_id when it has one (along
# facts_session), else by provenance among the facts with the same empty session (along facts_thread)
_STEP = """
    (SELECT {way} AS way, row_number() OVER (ORDER BY g.created_at {order}, g.id {order}) AS step,
            g.id, g.entity_slug, g.created_at FROM facts g
     WHERE {same} AND (g.created_at, g.id) {cmp} (f.created_at, f.id)
     ORDER BY g.created_at {order}, g.id {order} LIMIT %(window)s)"""
# each conversation rule holds for one kind of fact only (the others' branches are skipped once per
# fact): a b-tree finds `= f.source_session` and `IS NULL`, never `IS NOT DISTINCT FROM`
_SAME = ("f.source_session <> '' AND g.source_session = f.source_session",
         "f.source_session IS NULL AND g.source = f.source AND g.source_session IS NULL",
         "f.source_session = '' AND g.source = f.source AND g.source_session = ''")
_WALKS = " UNION ALL ".join(_STEP.format(way=way, order=order, cmp=cmp, same=same)
                            for way, order, cmp in ((-1, "DESC", "<"), (1, "ASC", ">")) for same in _SAME)
_NEIGHBOURS = f"""
SELECT f.id, f.created_at, n.way, n.step, n.id, n.entity_slug, n.created_at
FROM facts f CROSS JOIN LATERAL ({_WALKS}
) n
WHERE f.id = ANY(%(ids)s) AND f.entity_slug IS NULL
ORDER BY f.id, n.way, n.step
"""


def _idf(docs: int, total: int) -> float:
    return math.log(1 + (total - docs + 0.5) / (docs + 0.5))


def _any_of(words: Iterable[str]) -> str:
    """A tsquery matching any of the words: each is letters, digits and underscores only
    (fact_ranking.content_words), so none can be read as a tsquery operator."""
    return " | ".join(words)


def common_words(conn: psycopg.Connection, words: list[str], where: list[str], args: SqlArgs) -> list[str]:
    """fact_ranking.common_in, counted here among the latest facts in scope the caller may see."""
    if not words:
        return []
    rows = conn.execute(_COMMON.format(where=where_sql(where)), [*args, COMMON_WINDOW, words]).fetchall()
    return common_in(((w, int(n)) for w, n, _ in rows), int(rows[0][2]) if rows else 0)


def keyword_ranked(conn: psycopg.Connection, words: list[str], where: list[str], args: SqlArgs,
                   depth: int) -> dict[int, float]:
    """fact id -> keyword score, the best `depth` facts in scope holding any of the words."""
    if not words:
        return {}
    freq = conn.execute(_DOC_FREQ, (words,)).fetchall()
    held = [(w, _idf(int(n), int(total))) for w, n, total in freq if n]
    if not held:
        return {}
    terms: list[object] = []
    for w, idf in held:
        terms += [idf, RANK_WEIGHTS, w, RANK_NORMALIZATION]
    sql = _KEYWORD.format(score=" + ".join([_TERM] * len(held)),
                          where=where_sql([*where, "document @@ to_tsquery('english', %s)"]))
    rows = conn.execute(sql, [*terms, *args, _any_of(w for w, _ in held), depth]).fetchall()
    return {int(fid): float(score or 0.0) for fid, score in rows}


def in_scope(conn: psycopg.Connection, ids: Iterable[int], where: list[str], args: SqlArgs) -> set[int]:
    ids = sorted(set(ids))
    if not ids:
        return set()
    rows = conn.execute(f"SELECT id FROM facts{where_sql(['id = ANY(%s)', *where])}", [ids, *args]).fetchall()
    return {int(r[0]) for r in rows}


def neighbours(conn: psycopg.Connection, ids: list[int]) -> dict[int, dict[int, int]]:
    """fact id -> {neighbour id: turns apart}, both ways (stores/fact_neighbours.py says what a
    neighbour is)."""
    pairs: dict[int, list[tuple[int, int]]] = {}
    if not ids:
        return {}
    walks: dict[tuple[int, int], tuple[str, list[Step]]] = {}
    for fid, created, way, _, other, entity, other_created in conn.execute(
            _NEIGHBOURS, {"window": WINDOW, "ids": ids}).fetchall():
        walks.setdefault((int(fid), int(way)), (created, []))[1].append((int(other), entity, other_created))
    for (fid, _), (created, steps) in walks.items():
        pairs.setdefault(fid, []).extend(walk(created, steps))
    return both_ways(pairs)


class PgCandidates:
    """fact_ranking.FactCandidates on one connection, for one scope's clauses (`where`, `args`):
    the vector arm's cosines are SQL over the stored vectors, and the model's writer's own for the
    facts whose vector it is still writing (FactVectors.pending), so a recall right after a
    remember on the same front end finds it."""

    def __init__(self, conn: psycopg.Connection, vectors: "FactVectorsStore | None", where: list[str],
                 args: SqlArgs):
        self.conn, self.vectors, self.where, self.args = conn, vectors, where, args
        self._arm: _VectorArm | None = None

    def common_words(self, words: list[str]) -> list[str]:
        return common_words(self.conn, words, self.where, self.args)

    def keyword(self, words: list[str], depth: int) -> dict[int, float]:
        return keyword_ranked(self.conn, words, self.where, self.args, depth)

    def _vector_arm(self, qv: "Vector") -> "_VectorArm | None":
        if self.vectors is None:
            return None
        if self._arm is None or self._arm.qv is not qv:
            self._arm = _VectorArm(self.conn, self.vectors, qv)
        return self._arm

    def nearest(self, qv: "Vector", depth: int) -> dict[int, float]:
        arm = self._vector_arm(qv)
        return arm.nearest(self.where, self.args, depth) if arm else {}

    def cosines(self, qv: "Vector", ids: set[int]) -> dict[int, float]:
        arm = self._vector_arm(qv)
        return arm.cosines(ids) if arm else {}

    def neighbours(self, ids: list[int]) -> dict[int, dict[int, int]]:
        return neighbours(self.conn, ids)

    def in_scope(self, ids: set[int]) -> set[int]:
        return in_scope(self.conn, ids, self.where, self.args)

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        if not ids:
            return []
        rows = self.conn.execute("SELECT id, fact FROM facts WHERE id = ANY(%s)", (sorted(ids),)).fetchall()
        return [(int(fid), str(text)) for fid, text in rows]


class _VectorArm:
    """Cosines to one query vector: stored ones in SQL, pending ones from the model's writer."""

    def __init__(self, conn: psycopg.Connection, vectors: "FactVectorsStore", qv: "Vector"):
        self.conn, self.vectors, self.qv = conn, vectors, qv
        self.text = vector_text(qv.tolist())
        self.prefix = vectors.query_embedder().model_id + " "
        pending = getattr(vectors, "pending", None)   # FactVectors' own: the contract does not name it
        self.pending: dict[int, str] = pending() if callable(pending) else {}

    def _pending_scores(self, ids: Iterable[int]) -> dict[int, float]:
        return {fid: float(np.dot(self.vectors.vector(self.pending[fid]), self.qv))
                for fid in ids if fid in self.pending}

    def nearest(self, where: list[str], args: SqlArgs, depth: int) -> dict[int, float]:
        rows = self.conn.execute(_NEAREST.format(where=where_sql(where)),
                                 [self.text, self.prefix, *args, self.text, depth]).fetchall()
        scores = {int(fid): float(c) for fid, c in rows}
        scores.update(self._pending_scores(in_scope(self.conn, self.pending, where, args)))
        return scores

    def cosines(self, ids: set[int]) -> dict[int, float]:
        if not ids:
            return {}
        rows = self.conn.execute(_COSINES, (self.text, sorted(ids), self.prefix)).fetchall()
        scores = {int(fid): float(c) for fid, c in rows}
        scores.update(self._pending_scores(ids - set(scores)))
        return scores
