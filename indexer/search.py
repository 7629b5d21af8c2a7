"""Page search: keyword (tantivy), plus vectors when they are ready, fused by page.

Arms, in order of trust:
  1. exact: the query is a declared alias, or a page's whole title;
  2. keyword: tantivy over chunks (title and aliases boosted over body);
  3. vector: nearest chunks by cosine (only when the model has loaded).
Keyword and vector lists are fused by reciprocal rank per page; exact hits
lead. Each result names its evidence (PROTOCOL_NOTES §4.6) and whether the
file changed on disk since it was indexed.
"""

from __future__ import annotations

import logging

from .keyword import analyze, query_tokens
from .scan import stat_page
from .search_modes import KEYWORD_ONLY
from .slugs import normalize_alias

log = logging.getLogger("brain.search")

RRF_K = 60
HIGH_VECTOR = 0.8      # cosine at which a vector hit alone says "this page exists"
MIN_VECTOR = 0.25      # below this a vector-only hit is noise (nearest is not near)
KEYWORD_EXACT = 0.6    # share of the query's terms a lexical hit must contain
CREATE_SAFETY = {"alias_hit": "exists", "exact_title_match": "exists", "high_vector_match": "exists",
                 "keyword_exact": "probable", "weak_semantic": "unknown"}


def _dedup_pages(hits):
    """[(page_id, chunk_id, score)] best first, one per page."""
    seen: dict[int, tuple[int, int, float]] = {}
    order = []
    for score, chunk_id, page_id in hits:
        if page_id not in seen:
            seen[page_id] = (page_id, chunk_id, score)
            order.append(page_id)
    return [seen[p] for p in order]


def _keyword_pages(index, tokens, limit, remote):
    if index.keyword is None or not tokens:
        return []
    want = max(limit * 4, 40)
    hits = index.keyword.search(tokens, want, exclude_private=remote)
    pages = _dedup_pages(hits)
    if len(pages) < limit and len(hits) == want:
        # pages with many matching chunks crowded the list: look deeper once
        pages = _dedup_pages(index.keyword.search(tokens, want * 8, exclude_private=remote))
    return pages


def _exact_pages(db, query: str, remote: bool):
    """(alias-hit page ids, whole-title page ids)."""
    key = normalize_alias(query)
    vis = " AND p.visibility != 'private'" if remote else ""
    alias_ids = [r[0] for r in db.execute(
        f"SELECT p.id FROM aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = ?{vis} ORDER BY p.id LIMIT 20",
        (key,))] if key else []
    title_ids = [r[0] for r in db.execute(
        f"SELECT p.id FROM pages p WHERE p.title_key = ?{vis} ORDER BY p.id LIMIT 20", (" ".join(query.lower().split()),))]
    return alias_ids, title_ids


def _vector_pages(db, embedder, vectors, query: str, limit: int):
    """[(page_id, chunk_id, cosine)] best first, one per page."""
    import numpy as np  # only once vectors exist

    vec = np.asarray(embedder.embed([query]), dtype=np.float32)[0]
    hits = vectors.query(vec, max(limit * 4, 40))
    if not hits:
        return []
    ids = [int(c) for c, _ in hits]
    owner = dict(db.execute(f"SELECT id, page_id FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall())
    ranked = [(float(cos), cid, owner[cid]) for cid, cos in hits if cid in owner and cos >= MIN_VECTOR]
    ranked.sort(key=lambda h: -h[0])
    return _dedup_pages(ranked)


def _contiguous(needle: list[str], hay: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def search_pages(index, query: str, limit: int, *, remote: bool = True, embedder=None, vectors=None):
    """(results, degraded reason or None); never raises on any query text."""
    use_vectors = embedder is not None and vectors is not None and bool(getattr(vectors, "ready", False))
    degraded = None if use_vectors else KEYWORD_ONLY
    q = " ".join((query or "").split())
    if not q or limit <= 0:
        return [], degraded
    db = index.db
    tokens = query_tokens(q)
    alias_ids, title_ids = _exact_pages(db, q, remote)
    kw = _keyword_pages(index, tokens, limit, remote)
    vec = []
    if use_vectors:
        try:
            vec = _vector_pages(db, embedder, vectors, q, limit)
        except Exception:  # a vector failure degrades the search, never fails it
            log.warning("vector search failed; answering from keywords", exc_info=True)
            degraded = KEYWORD_ONLY

    fused: dict[int, float] = {}
    for ranked in (kw, vec):
        for rank, (pid, _, _) in enumerate(ranked):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
    exact = list(dict.fromkeys(alias_ids + title_ids))
    exact_set = set(exact)
    order = exact + sorted((p for p in fused if p not in exact_set), key=lambda p: -fused[p])
    if not order:
        return [], degraded
    order = order[: max(limit * 2, limit + len(exact))]

    kw_chunk = {pid: cid for pid, cid, _ in kw}
    vec_hit = {pid: (cid, cos) for pid, cid, cos in vec}
    rows = {r["id"]: r for r in db.execute(
        "SELECT id, slug, title, path, visibility, mtime_ns, size, indexed_at FROM pages "
        f"WHERE id IN ({','.join('?' * len(order))})", order)}
    chunk_ids = {kw_chunk.get(p) or (vec_hit[p][0] if p in vec_hit else None) for p in order} - {None}
    chunks = {}
    if chunk_ids:
        chunks = {r[0]: r for r in db.execute(
            f"SELECT id, page_id, text FROM chunks WHERE id IN ({','.join('?' * len(chunk_ids))})", list(chunk_ids))}
    missing = [p for p in order if p in rows and not (kw_chunk.get(p) or p in vec_hit)]
    first_chunk = {}
    if missing:
        for r in db.execute(f"SELECT page_id, id, text FROM chunks WHERE page_id IN ({','.join('?' * len(missing))}) "
                            "AND ord = 0", missing):
            first_chunk[r[0]] = r
    aliases: dict[int, list[str]] = {}
    for alias, pid in db.execute(f"SELECT alias, page_id FROM aliases WHERE page_id IN ({','.join('?' * len(order))})",
                                 order):
        aliases.setdefault(pid, []).append(alias)

    alias_set, title_set = set(alias_ids), set(title_ids)
    q_tokens = set(tokens)
    results = []
    for pid in order:
        row = rows.get(pid)
        if row is None or (remote and row["visibility"] == "private"):
            continue
        cid = kw_chunk.get(pid) or (vec_hit[pid][0] if pid in vec_hit else None)
        text = chunks[cid]["text"] if cid in chunks else (first_chunk[pid]["text"] if pid in first_chunk else "")
        evidence = _evidence(pid, row["title"], aliases.get(pid, []), text, tokens, q_tokens,
                             alias_set, title_set, pid in kw_chunk, vec_hit.get(pid))
        results.append({
            "slug": row["slug"],
            "title": row["title"] or row["slug"],
            "chunk": text or None,
            "evidence": evidence,
            "create_safety": CREATE_SAFETY[evidence],
            "provenance": row["slug"],
            "indexed_at": row["indexed_at"],
            "stale": _stale(index.vault, row),
        })
        if len(results) >= limit:
            break
    return results, degraded


def _evidence(pid, title, page_aliases, text, tokens, q_tokens, alias_set, title_set, lexical, vec_hit) -> str:
    if pid in alias_set:
        return "alias_hit"
    if pid in title_set or _contiguous(tokens, analyze(title or "")):
        return "exact_title_match"
    if vec_hit is not None and vec_hit[1] >= HIGH_VECTOR:
        return "high_vector_match"
    if lexical and q_tokens:
        seen = set(analyze(f"{title}\n{' '.join(page_aliases)}\n{text}"))
        if len(q_tokens & seen) / len(q_tokens) >= KEYWORD_EXACT:
            return "keyword_exact"
    return "weak_semantic"


def _stale(vault, row) -> bool:
    st = stat_page(vault, row["path"])
    return st is None or st.mtime_ns != row["mtime_ns"] or st.size != row["size"]
