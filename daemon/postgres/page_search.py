"""Page search in PostgreSQL: keyword (tsvector), vector (pgvector HNSW), and the two fused.

The arms follow the embedded search (indexer/pages/search.py) so the two can
be measured side by side (bench/bench_pg_search.py, docs/scaling.md):

  exact    the query is a page's alias, whole title (either number) or one of
           its headings: these pages lead, as in the embedded search;
  keyword  chunks whose document (page_load.py: title and aliases A, headings
           B, path and tags C, body D) holds any query word, each word counted
           by how telling it is (idf over the chunks, as tantivy's BM25 does)
           and by the field it stands in (WEIGHTS, in the proportions of
           keyword.BOOSTS), plus the query as a phrase;
  vector   nearest chunks by cosine distance (HNSW), the query embedded by
           the caller with the daemon's own model; with `cards`, the pages'
           cards (chunk ord CARD_ORD) as a list of their own.
Keyword and vector lists are fused per page by `cards` (the embedded search's
own fusion, indexer/page_policy/fusion.py: keyword, nearest chunks and nearest
cards; what the pages store uses), by each arm's share of its best (`share`,
this function's default) or by reciprocal rank (`rrf`); docs/scaling.md has
each on every question set.
Visibility is applied in every query: a viewer that may not see private
pages never gets one, nor a passage of one.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import psycopg

from ...indexer.page_policy.evidence import CREATE_SAFETY, coverage, evidence_of
from ...indexer.page_policy.search_limits import COVER_WEIGHT, MAX_EXACT, MIN_VECTOR, RERANK_N, VECTOR_DEPTH
from ...indexer.page_policy.terms import (BOOSTS, MAX_QUERY_TOKENS, TermFinder, content_tokens, number_forms,
                                         query_tokens, text_key)
from ...indexer.page_policy.passage import best_passage
from ...indexer.page_policy.fusion import fuse as fuse_with_cards
from ...indexer.vault.chunks import CARD_ORD

VECTOR_FLOOR = 0.2     # cosine that counts as nothing in the fusion by share of the best
VECTOR_WEIGHT = 0.5    # the vector arm's weight next to the keyword arm's 1
from ...indexer.vault.slugs import normalize_alias
from ...indexer.vault.visibility import Viewer
from .page_load import vector_text, words

# ts_rank's weights in its order {D, C, B, A}: body, path and tags, headings, title and aliases
WEIGHTS = [BOOSTS["body"] / BOOSTS["title"], BOOSTS["path"] / BOOSTS["title"],
           BOOSTS["headings"] / BOOSTS["title"], 1.0]
PHRASE_WEIGHT = 2.0     # the whole query as a phrase, next to one telling word's share
RANK_NORMALIZATION = 1  # ts_rank: divide by 1 + log(document length), as BM25 damps long chunks
RRF_K = 60
EF_SEARCH = 100         # HNSW candidates per vector query (pgvector's default is 40)

_VISIBLE = "(%(all)s OR p.visibility <> 'private')"

_KEYWORD = f"""
SELECT c.id, c.page_id,
       coalesce((SELECT sum(t.idf * ts_rank(%(w)s::float4[], c.document, to_tsquery('simple', t.lex), %(norm)s))
                 FROM unnest(%(lex)s::text[], %(idf)s::float8[]) AS t(lex, idf)), 0)
       + CASE WHEN %(phrase)s THEN %(pw)s * ts_rank(%(w)s::float4[], c.document,
                                                    phraseto_tsquery('english', %(q)s), %(norm)s)
              ELSE 0 END AS score,
       -- the idf-weighted share of the query's words this chunk holds in any field
       coalesce((SELECT sum(t.idf) FROM unnest(%(lex)s::text[], %(idf)s::float8[]) AS t(lex, idf)
                 WHERE c.document @@ to_tsquery('simple', t.lex)), 0) / %(idf_total)s AS cover
FROM chunks c JOIN pages p ON p.id = c.page_id
WHERE c.document @@ to_tsquery('simple', %(any)s) AND {_VISIBLE}
ORDER BY score DESC, c.id
LIMIT %(want)s
"""

_VECTOR = f"""
SELECT c.id, c.page_id, 1 - (c.embedding <=> %(v)s::vector) AS cosine, c.ord
FROM chunks c JOIN pages p ON p.id = c.page_id
WHERE c.embedding IS NOT NULL AND {_VISIBLE}
ORDER BY c.embedding <=> %(v)s::vector
LIMIT %(want)s
"""


def _value(conn: psycopg.Connection, sql: str, args: Any) -> Any:
    """The one value of a query that answers one row whatever the tables hold (an aggregate, a function)."""
    row = conn.execute(sql, args).fetchone()
    return row[0] if row is not None else None


def _lexemes(conn: psycopg.Connection, text: str) -> list[str]:
    """PostgreSQL's English lexemes of the query words; its stop words dropped unless nothing else is left."""
    lex = _value(conn, "SELECT tsvector_to_array(to_tsvector('english', %s))", (text,))
    if not lex:
        lex = _value(conn, "SELECT tsvector_to_array(to_tsvector('simple', %s))", (text,))
    return list(lex or [])[:MAX_QUERY_TOKENS]


def _idf(conn: psycopg.Connection, lexemes: list[str]) -> list[float]:
    """ln(1 + N / (1 + chunks holding the lexeme)), over every chunk (as the tantivy arm's idf)."""
    n = _value(conn, "SELECT count(*) FROM chunks", ())
    rows = conn.execute("SELECT (SELECT count(*) FROM chunks WHERE document @@ to_tsquery('simple', l)) "
                        "FROM unnest(%s::text[]) WITH ORDINALITY AS u(l, i) ORDER BY i", (lexemes,)).fetchall()
    return [math.log(1.0 + max(1, n) / (1.0 + df)) for (df,) in rows]


def _best_per_page(rows: Iterable[Sequence[Any]]) -> list[tuple[int, int, float]]:
    """[(page_id, chunk_id, score)] best first, one per page."""
    seen: dict[int, tuple[int, int, float]] = {}
    for chunk_id, page_id, score in rows:
        seen.setdefault(page_id, (page_id, chunk_id, float(score)))
    return list(seen.values())


def keyword_pages(conn: psycopg.Connection, text: str, viewer: Viewer, want: int,
                  cover: dict[int, float] | None = None) -> list[tuple[int, int, float]]:
    """[(page id, chunk id, score)] best first, one per page; `cover` (when given) gets each page's
    share of the query its chunk holds."""
    lexemes = _lexemes(conn, text)
    if not lexemes:
        return []
    idf = _idf(conn, lexemes)
    args = {"w": WEIGHTS, "lex": lexemes, "idf": idf, "idf_total": sum(idf) or 1.0, "any": " | ".join(lexemes),
            "phrase": len(text.split()) > 1, "pw": PHRASE_WEIGHT, "norm": RANK_NORMALIZATION, "q": text,
            "all": viewer.sees_private, "want": want}
    rows = conn.execute(_KEYWORD, args).fetchall()
    if cover is not None:
        held = {cid: float(c) for cid, _, _, c in rows}
        pages = _best_per_page((cid, pid, score) for cid, pid, score, _ in rows)
        cover.update((pid, held[cid]) for pid, cid, _ in pages)
    if len(lexemes) < 2 or not rows or not COVER_WEIGHT:   # one word: every hit holds all of it
        return _best_per_page((cid, pid, score) for cid, pid, score, _ in rows)
    best = rows[0][2] or 1.0
    top = sorted(((cid, pid, score / best + COVER_WEIGHT * cover) for cid, pid, score, cover in rows[:RERANK_N]),
                 key=lambda r: -r[2])
    return _best_per_page(top + [(cid, pid, score / best) for cid, pid, score, _ in rows[RERANK_N:]])


def vector_pages(conn: psycopg.Connection, query_vector: Sequence[float], viewer: Viewer, want: int) -> list[tuple[int, int, float]]:
    rows = sorted((r[:3] for r in _nearest(conn, query_vector, viewer, want) if r[2] >= MIN_VECTOR),
                  key=lambda r: -r[2])
    return _best_per_page(rows)


def vector_arms(conn: psycopg.Connection, query_vector: Sequence[float], viewer: Viewer,
                want: int) -> tuple[list[tuple[int, int, float]], list[tuple[int, int, float]]]:
    """(pages by their nearest body chunk, pages by their card), best first, one per page each:
    the embedded search's two vector lists (indexer/pages/search.py)."""
    rows = sorted(_nearest(conn, query_vector, viewer, want), key=lambda r: -r[2])
    return (_best_per_page(r[:3] for r in rows if r[3] != CARD_ORD),
            _best_per_page(r[:3] for r in rows if r[3] == CARD_ORD))


def _nearest(conn: psycopg.Connection, query_vector: Sequence[float], viewer: Viewer,
             want: int) -> list[tuple[Any, ...]]:
    with conn.transaction():
        # relaxed order: HNSW keeps scanning until `want` rows pass the visibility filter
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, want)}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        return conn.execute(_VECTOR, {"v": vector_text(query_vector), "all": viewer.sees_private,
                                      "want": want}).fetchall()


def _exact_pages(conn: psycopg.Connection, query: str, viewer: Viewer) -> dict[int, tuple[str, int | None]]:
    """page id → (which exact arm found it, the chunk to show), alias first, then title, then heading."""
    out: dict[int, tuple[str, int | None]] = {}
    vis = {"all": viewer.sees_private, "n": MAX_EXACT}
    for key in number_forms(normalize_alias(query)):
        for (pid,) in conn.execute("SELECT p.id FROM aliases a JOIN pages p ON p.id = a.page_id "
                                   f"WHERE a.alias = %(k)s AND {_VISIBLE} ORDER BY p.id LIMIT %(n)s", {"k": key, **vis}):
            out.setdefault(pid, ("alias", None))
    for key in number_forms(" ".join(query.lower().split())):
        for (pid,) in conn.execute(f"SELECT p.id FROM pages p WHERE p.title_key = %(k)s AND {_VISIBLE} "
                                   "ORDER BY p.id LIMIT %(n)s", {"k": key, **vis}):
            out.setdefault(pid, ("title", None))
    key = text_key(query)
    if key:
        for cid, pid in conn.execute("SELECT c.id, c.page_id FROM chunks c JOIN pages p ON p.id = c.page_id "
                                     f"WHERE c.heading_key = %(k)s AND {_VISIBLE} ORDER BY c.page_id, c.ord "
                                     "LIMIT %(n)s", {"k": key, **vis}):
            out.setdefault(pid, ("heading", cid))
    return dict(list(out.items())[:MAX_EXACT * 3])


def fuse(kw: Sequence[tuple[int, int, float]], vec: Sequence[tuple[int, int, float]],
         how: str = "share") -> dict[int, float]:
    """page id → fused score: reciprocal rank (`rrf`), or each arm's share of its best with the
    vector arm at the embedded search's weight (`share`)."""
    fused: dict[int, float] = {}
    if how == "rrf":
        for ranked in (kw, vec):
            for rank, (pid, _, _) in enumerate(ranked):
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
        return fused
    if kw:
        best = kw[0][2] or 1.0
        for pid, _, score in kw:
            fused[pid] = score / best
    if vec:
        span = max(1e-6, vec[0][2] - VECTOR_FLOOR)
        for pid, _, cos in vec:
            fused[pid] = fused.get(pid, 0.0) + VECTOR_WEIGHT * max(0.0, cos - VECTOR_FLOOR) / span
    return fused


def search(conn: psycopg.Connection, query: str, query_vector: Sequence[float] | None, viewer: Viewer,
           limit: int, *, mode: str = "hybrid", fusion: str = "share") -> list[dict[str, Any]]:
    """The best pages for `query`, in the embedded search's hit shape (slug, title, chunk, evidence,
    create_safety, score, provenance, indexed_at). `mode`: keyword, vector or hybrid; the vector
    arm runs only with a `query_vector`. `fusion`: `cards` (the embedded search's: nearest chunks and
    nearest page cards as two lists, fusion.py), `share` or `rrf`. Never returns a page `viewer` may not see."""
    q = " ".join((query or "").split())
    if not q or limit <= 0 or mode not in ("keyword", "vector", "hybrid"):
        return []
    text = words(q)
    want = max(limit * 4, 40)
    exact = _exact_pages(conn, q, viewer) if mode != "vector" else {}
    cover: dict[int, float] = {}
    kw = keyword_pages(conn, text, viewer, want, cover) if mode != "vector" and text else []
    qv = query_vector if mode != "keyword" else None
    if fusion == "cards":
        body, cards = vector_arms(conn, qv, viewer, max(want, VECTOR_DEPTH)) if qv is not None else ([], [])
        fused = fuse_with_cards(kw, cover, body, cards)
        near = {pid: cos for pid, _, cos in cards}
        near.update((pid, max(cos, near.get(pid, cos))) for pid, _, cos in body)
        found = {pid for pid, _, _ in kw}
        fused = {pid: f for pid, f in fused.items() if pid in found or near.get(pid, 0.0) >= MIN_VECTOR}
        shown_body = {pid for pid, _, _ in body}
        vec = body + [c for c in cards if c[0] not in shown_body]   # a body chunk's passage before a card's
    else:
        vec = vector_pages(conn, qv, viewer, want) if qv is not None else []
        fused = fuse(kw, vec, fusion)
    order = list(exact) + sorted((p for p in fused if p not in exact), key=lambda p: -fused[p])
    order = order[:limit]
    if not order:
        return []
    # the passage shown: the heading an exact hit named, else the keyword chunk (it holds the words), else the nearest
    kw_chunk = {pid: cid for pid, cid, _ in kw}
    vec_chunk = {pid: cid for pid, cid, _ in vec}
    shown = {pid: exact.get(pid, (None, None))[1] or kw_chunk.get(pid) or vec_chunk.get(pid) for pid in order}
    return _hits(conn, q, order, shown, exact, kw, vec, fused, viewer)


def _hits(conn: psycopg.Connection, q: str, order: list[int], shown: dict[int, int | None],
          exact: dict[int, tuple[str, int | None]], kw: Sequence[tuple[int, int, float]],
          vec: Sequence[tuple[int, int, float]], fused: dict[int, float], viewer: Viewer) -> list[dict[str, Any]]:
    rows = {r[0]: r for r in conn.execute(
        f"SELECT p.id, p.slug, p.title, p.indexed_at, "
        "coalesce((SELECT c.text FROM chunks c WHERE c.id = s.cid), "
        "         (SELECT c.text FROM chunks c WHERE c.page_id = p.id ORDER BY c.ord LIMIT 1), ''), "
        "coalesce((SELECT string_agg(a.display, ' ') FROM aliases a WHERE a.page_id = p.id), '') "
        f"FROM pages p JOIN unnest(%(ids)s::bigint[], %(cids)s::bigint[]) AS s(pid, cid) ON s.pid = p.id "
        f"WHERE {_VISIBLE}", {"ids": order, "cids": [shown.get(p) for p in order], "all": viewer.sees_private})}
    tokens = query_tokens(q)
    finder = TermFinder(content_tokens(tokens))
    kw_pages = {pid for pid, _, _ in kw}
    cosine = {pid: cos for pid, _, cos in vec}
    idf = {t: 1.0 for t in finder.tokens}
    top = max(fused.values(), default=0.0) or 1.0
    hits = []
    for pid in order:
        row = rows.get(pid)
        if row is None:
            continue
        _, slug, title, indexed_at, text, aliases = row
        arm = exact.get(pid, (None, None))[0]
        share = fused.get(pid, 0.0) / top
        evidence = evidence_of(exact=arm, tokens=tokens, title=title or "", cosine=cosine.get(pid),
                               lexical=pid in kw_pages, cover=coverage(idf, finder.found(f"{title}\n{aliases}\n{text}")),
                               share=share)
        hits.append({"slug": slug, "title": title or slug, "chunk": best_passage(text, finder) or None,
                     "evidence": evidence, "create_safety": CREATE_SAFETY[evidence],
                     "score": 1.0 if arm else round(share, 3), "provenance": slug, "indexed_at": indexed_at})
    return hits
