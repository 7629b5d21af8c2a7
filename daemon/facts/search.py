"""Facts ranked by what they say (docs/protocol.md §3.1, recall with a query).

Two arms, combined by score (docs/architecture.md, "Facts ranking"):

- keyword: BM25 over `facts_fts` (SQLite FTS5 in the facts cache, Porter
  stemming), which holds each fact's text and its date words
  (`dates.py`). It lives in the same database and is written in the
  same transaction as the facts row, so a fact is searchable the moment
  `remember` returns and a cache rebuild recreates it from the log; every
  filter (scope, active, world-only, grep) is SQL applied before the limit,
  so a remote caller's ranking never touches a private row. With vectors,
  a word in most facts (a speaker's name opening every turn) is left out of it.
- vector: cosine to the fact vectors (`indexer/embeddings/fact_vectors.py`) once the
  embedding model has loaded; with such a common word in the question, to
  the mean of the question's vector and that of the question without it.

A fact's own score is its cosine plus a share of its BM25, cut down when
the fact says little (a few content words: "how's Sam" shares the
question's one rare word and would win on it). Its score is that plus a
share of its best neighbour's own score (`neighbours.py`: the turns up to
two before or after it in the same conversation, the nearer lending more),
so a turn that only points at its subject ("look at this!", "Mango" two
turns after "she renamed the cat") rises with the turn that names it.
A fact is returned only when it
or a neighbour matched (a keyword hit, or a cosine at or above
VECTOR_FLOOR): a query that matches nothing returns nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .neighbours import neighbours
from .scope_sql import ORDER_SQL, clauses as scope_clauses
from ...indexer.vault.visibility import Viewer
from ..stores.fact_neighbours import both_ways
from ..stores.fact_ranking import (COMMON_WINDOW, DATE_WEIGHT, DEPTH, TEXT_WEIGHT, VECTOR_FLOOR, common_cap,
                                   common_in, content_words, fuse, keyword_words, little_shares, query_vector)
from ..stores.facts import Fact, FactScope, Order

if TYPE_CHECKING:
    from ..stores.vectors import FactVectorsStore
    from .reads import FactReads

SCOPE_CAP = 20_000     # most facts a scoped vector search scores


def _common(store, words: list[str], clauses: list[str], params: list) -> list[str]:
    """The words in more than COMMON_SHARE of the text of the latest COMMON_WINDOW facts in
    scope. A name that opens every turn of a conversation ("Tom: ...") matches half the
    facts: on its own it would rank any turn of Tom's above the one that answers (BM25's IDF
    only damps it; the sentence vector of a short turn is mostly the name). Counted among
    the facts the caller may see only, so what a remote caller gets never depends on a
    private fact; among the latest ones, so the count costs the same at any size."""
    with store.lock:
        # the window by save time: ids are minted per device (docs/architecture.md, "Fact ids"),
        # so the latest facts are not the highest ids
        scope = " AND ".join(f"({c})" for c in clauses) or "1"
        row = store.db.execute(f"SELECT created_at FROM facts WHERE {scope} ORDER BY created_at DESC, id DESC "
                               "LIMIT 1 OFFSET ?", [*params, COMMON_WINDOW - 1]).fetchone()
        window = ["facts.created_at >= ?"] if row else []
        where = " AND ".join(window + [f"({c})" for c in clauses]) or "1"
        args = ([row[0]] if row else []) + list(params)
        total = store.db.execute(f"SELECT COUNT(*) FROM facts WHERE {where}", args).fetchone()[0]
        cap = common_cap(total)
        sql = (f"SELECT COUNT(*) FROM (SELECT 1 FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid "
               f"WHERE facts_fts MATCH ? AND {where} LIMIT ?)")
        return common_in(((w, store.db.execute(sql, [f'text : "{w}"', *args, cap]).fetchone()[0]) for w in words),
                         total)


def keyword_expression(words: list[str], common: list[str]) -> str | None:
    """The FTS5 query: fact_ranking.keyword_words, any of them."""
    words = keyword_words(words, common)
    return " OR ".join(f'"{w}"' for w in words) if words else None


_ORDER = f"bm25(facts_fts, {TEXT_WEIGHT}, {DATE_WEIGHT}), facts_fts.rowid DESC"
_SCORE = f"-bm25(facts_fts, {TEXT_WEIGHT}, {DATE_WEIGHT})"


def keyword_ranked(store, expr: str | None, scoped: bool, clauses: list[str], params: list,
                   depth: int) -> list[tuple[int, float]]:
    """(fact id, BM25), best first, among facts matching every clause."""
    if expr is None:
        return []
    if scoped:
        where = " AND ".join(["facts_fts MATCH ?"] + [f"({c})" for c in clauses])
        sql = (f"SELECT facts.id, {_SCORE} FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid "
               f"WHERE {where} ORDER BY {_ORDER} LIMIT ?")
        with store.lock:
            return [(r[0], r[1]) for r in store.db.execute(sql, [expr, *params, depth]).fetchall()]

    # only the common filters: rank the index alone (half the cost of the join), then filter
    def top(k: int) -> list[tuple[int, float]]:
        sql = f"SELECT rowid, {_SCORE} FROM facts_fts WHERE facts_fts MATCH ? ORDER BY {_ORDER} LIMIT ?"
        with store.lock:
            return [(r[0], r[1]) for r in store.db.execute(sql, (expr, k)).fetchall()]

    return _filtered_top(store, top, clauses, params, depth)


def _in_scope(store, ids: list[int], clauses: list[str], params: list) -> set[int]:
    if not ids:
        return set()
    where = " AND ".join([f"id IN ({','.join('?' * len(ids))})"] + [f"({c})" for c in clauses])
    with store.lock:
        return {r[0] for r in store.db.execute(f"SELECT id FROM facts WHERE {where}", [*ids, *params])}


def vector_ranked(store, vectors, query, scoped: bool, clauses: list[str], params: list,
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


def says_little(store, ids: list[int]) -> dict[int, float]:
    """fact id -> the share of its own score a fact keeps for how little it says: its content
    words (after a leading speaker label) over SAYS_LITTLE, for the facts with fewer. "how's Sam"
    shares the question's one rare word and, being short, wins BM25 and the cosine over the
    turn that answers; a turn with a few words to say is rarely the answer (tune set: the
    evidence turns have 14 words at the median, 4 % have 4 or fewer)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    with store.lock:
        rows = store.db.execute(f"SELECT id, fact FROM facts WHERE id IN ({marks})", sorted(ids)).fetchall()
    return little_shares(rows)


def rank_facts(store: "FactReads", vectors: "FactVectorsStore | None", query: str, scope: FactScope, viewer: Viewer,
               limit: int, *, floor: float = VECTOR_FLOOR) -> list[Fact]:
    """The facts in `scope` the viewer may see most relevant to `query`, best first, at most `limit`."""
    store.refresh()
    clauses, args = scope_clauses(scope, viewer)
    scoped = scope.narrows()
    depth = max(DEPTH, limit)
    words = content_words(query)
    common = _common(store, words, clauses, args)
    # without vectors the common word stays: BM25's IDF damps it, and it is then the only thing
    # that tells one speaker's turns from the other's (tune set: R@10 0.286 with it, 0.268 without)
    expr = keyword_expression(words, common if vectors is not None else [])
    keyword = dict(keyword_ranked(store, expr, scoped, clauses, args, depth))
    cosine: dict[int, float] = {}
    if vectors is not None:
        qv = query_vector(vectors, query, common)
        cosine = dict(vector_ranked(store, vectors, qv, scoped, clauses, args, depth))
    found = set(keyword) | set(cosine)
    pairs = neighbours(store, sorted(found))
    around = {j for js in pairs.values() for j, _ in js} - found
    # a neighbour outside the caller's scope (private, expired) lends no score; one beyond the
    # keyword arm's depth lends only its cosine
    around = _in_scope(store, sorted(around), clauses, args)
    if vectors is not None:
        cosine.update(vectors.cosines(qv, sorted((found | around) - set(cosine))))
    ids = fuse(found | around, keyword, cosine, both_ways(pairs), floor, vectors is not None, limit,
               lambda batch: says_little(store, batch))
    if not ids:
        return []
    rows = store.select([*clauses, f"id IN ({','.join('?' * len(ids))})"], [*args, *ids], ORDER_SQL[Order.ID], None)
    by_id = {r.id: r for r in rows}
    return [by_id[i] for i in ids if i in by_id]
