"""Facts ranked by what they say (docs/protocol.md §3.1, recall with a query).

Two arms, fused by reciprocal rank:

- keyword: BM25 over `facts_fts` (SQLite FTS5 in the facts cache, Porter
  stemming), which holds each fact's text and its date words
  (`dates.py`). It lives in the same database and is written in the
  same transaction as the facts row, so a fact is searchable the moment
  `remember` returns and a cache rebuild recreates it from the log; every
  filter (scope, active, world-only, grep) is SQL applied before the limit,
  so a remote caller's ranking never touches a private row.
- vector: cosine to the fact vectors (`indexer/fact_vectors.py`) once the
  embedding model has loaded; a fact reached only by this arm must clear
  VECTOR_FLOOR, so a query that matches nothing returns nothing.
"""

from __future__ import annotations

import re

from .dates import query_date_words
from .schema import scope_clauses
from ...indexer.timestamps import utcnow

RRF_K = 60
DEPTH = 50             # candidates each arm contributes to the fusion
SCOPE_CAP = 20_000     # most facts a scoped vector search scores
MAX_TERMS = 32
# cosine a vector-only hit needs, chosen by `bench/retrieval_eval.py --calibrate` (Youden's J
# over evidence turns vs. the nearest turn of unanswerable questions: 0.55)
VECTOR_FLOOR = 0.55
TEXT_WEIGHT, DATE_WEIGHT = 1.0, 0.3

STOPWORDS = frozenset("""
a about after again all also am an and any are as at be been before being both but by can could did do does
doing done for from had has have having he her here hers him his how i if in into is it its itself just me
more most my no nor not now of off on once only or other our ours out over own same she should so some such
than that the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours s t d ll m re ve tell know
""".split())
_WORD = re.compile(r"\w+", re.UNICODE)


def match_expression(query: str) -> str | None:
    """An FTS5 query OR-ing the query's content words, each quoted (user text is never FTS syntax)."""
    words: list[str] = []
    for w in _WORD.findall(f"{query} {query_date_words(query, utcnow().date())}".lower()):
        w = w.strip("_")
        if w and w not in STOPWORDS and w not in words:
            words.append(w)
            if len(words) >= MAX_TERMS:
                break
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)


def keyword_ranked(store, query: str, scoped: bool, clauses: list[str], params: list, depth: int) -> list[int]:
    """Fact ids by BM25, best first, among facts matching every clause."""
    expr = match_expression(query)
    if expr is None:
        return []
    order = f"bm25(facts_fts, {TEXT_WEIGHT}, {DATE_WEIGHT}), facts_fts.rowid DESC"
    if scoped:
        where = " AND ".join(["facts_fts MATCH ?"] + [f"({c})" for c in clauses])
        sql = (f"SELECT facts.id FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid WHERE {where} "
               f"ORDER BY {order} LIMIT ?")
        with store.lock:
            return [r[0] for r in store.db.execute(sql, [expr, *params, depth]).fetchall()]

    # only the common filters: rank the index alone (half the cost of the join), then filter
    def top(k: int) -> list[tuple[int, None]]:
        sql = f"SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY {order} LIMIT ?"
        with store.lock:
            return [(r[0], None) for r in store.db.execute(sql, (expr, k)).fetchall()]

    return [fid for fid, _ in _filtered_top(store, top, clauses, params, depth)]


def _in_scope(store, ids: list[int], clauses: list[str], params: list) -> set[int]:
    if not ids:
        return set()
    where = " AND ".join([f"id IN ({','.join('?' * len(ids))})"] + [f"({c})" for c in clauses])
    with store.lock:
        return {r[0] for r in store.db.execute(f"SELECT id FROM facts WHERE {where}", [*ids, *params])}


def vector_ranked(store, vectors, query: str, scoped: bool, clauses: list[str], params: list,
                  depth: int) -> list[tuple[int, float]]:
    """(fact id, cosine), best first, among facts matching every clause."""
    if scoped:
        # a scope (entity, session, since, grep) is usually small: score exactly its facts
        where = " AND ".join(f"({c})" for c in clauses) or "1"
        with store.lock:
            ids = [r[0] for r in store.db.execute(
                f"SELECT id FROM facts WHERE {where} ORDER BY valid_from DESC, id DESC LIMIT ?",
                [*params, SCOPE_CAP])]
        return vectors.search(query, depth, ids) if ids else []
    return _filtered_top(store, lambda k: vectors.search(query, k), clauses, params, depth)


def _filtered_top(store, top, clauses: list[str], params: list, depth: int) -> list[tuple[int, float | None]]:
    """The best `depth` of `top(k)` (id, score) that pass the clauses; k widens while they
    remove too many (expired or, for a remote caller, private facts)."""
    k = depth * 4
    while True:
        hits = top(k)
        keep = _in_scope(store, [fid for fid, _ in hits], clauses, params)
        ranked = [(fid, score) for fid, score in hits if fid in keep]
        if len(ranked) >= depth or len(hits) < k:
            return ranked[:depth]
        k *= 4


def fuse(keyword: list[int], vector: list[tuple[int, float]], floor: float) -> list[int]:
    """Reciprocal-rank fusion; a fact only the vector arm found must reach `floor`."""
    kw = set(keyword)
    scores: dict[int, float] = {}
    for rank, fid in enumerate(keyword):
        scores[fid] = scores.get(fid, 0.0) + 1.0 / (RRF_K + rank + 1)
    for rank, (fid, cos) in enumerate(vector):
        if fid in kw or cos >= floor:
            scores[fid] = scores.get(fid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda fid: -scores[fid])


def rank_facts(store, vectors, query: str, where: list[str], params: list, limit: int, *,
               active_only: bool, world_only: bool, floor: float = VECTOR_FLOOR) -> list:
    """The facts in scope (`where`) most relevant to `query`, best first, at most `limit` rows."""
    store.refresh()
    clauses, args = scope_clauses(where, params, active_only, world_only)
    depth = max(DEPTH, limit)
    keyword = keyword_ranked(store, query, bool(where), clauses, args, depth)
    vector = []
    if vectors is not None:
        vector = vector_ranked(store, vectors, query, bool(where), clauses, args, depth)
    ids = fuse(keyword, vector, floor)[:limit]
    if not ids:
        return []
    rows = store.query([f"id IN ({','.join('?' * len(ids))})"], ids, "id", None,
                       active_only=active_only, world_only=world_only)
    by_id = {r["id"]: r for r in rows}
    return [by_id[i] for i in ids if i in by_id]
