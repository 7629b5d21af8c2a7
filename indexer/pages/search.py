"""Page search: keyword (tantivy), plus vectors when they are ready, fused by page.

Arms, in order of trust:
  1. exact: the query is a declared alias, a page's whole title (in either
     number: "hotkey" finds the page titled Hotkeys), or one of its
     headings — these pages lead;
  2. keyword: tantivy over chunks, fielded (title, aliases, headings, path,
     tags, body) with phrase and proximity boosts; the best chunks are then
     re-scored by how much of the query (idf-weighted) they hold;
  3. vector: nearest chunks by cosine (only when the model has loaded).
Each page also has a card (its title, description and first sentence, see
indexer/vault/chunks.py page_card) with a vector of its own, so the vector
arm ranks pages twice: by their nearest chunk and by their card. The lists
are fused per page (fusion.py). Each result shows the passage that matched
(passage.py, from the page's best-matching chunk, never the card when a body
chunk matched), names its evidence (evidence.py, docs/protocol.md §4.6) and says whether the file
changed on disk since it was indexed.
"""

from __future__ import annotations

import logging

from ..page_policy.evidence import CREATE_SAFETY, coverage, evidence_of
from ..page_policy.fusion import fuse
from ..page_policy.search_limits import COVER_WEIGHT, MAX_EXACT, MIN_VECTOR, RERANK_N, VECTOR_DEPTH
from ..page_policy.terms import TermFinder, content_tokens, number_forms, query_tokens, text_key
from ..page_policy.passage import best_passage
from ..vault.chunks import CARD_ORD
from ..vault.scan import stat_page
from ..embeddings.search_modes import KEYWORD_ONLY
from ..vault.slugs import normalize_alias
from ..vault.visibility import Viewer
from ..page_policy.visible import hide_private

WORLD = Viewer.world()

log = logging.getLogger("brain.search")


def _marks(values) -> str:
    return ",".join("?" * len(values))


def _dedup_pages(hits):
    """[(page_id, chunk_id, score)] best first, one per page."""
    seen: dict[int, tuple[int, int, float]] = {}
    order = []
    for score, chunk_id, page_id in hits:
        if page_id not in seen:
            seen[page_id] = (page_id, chunk_id, score)
            order.append(page_id)
    return [seen[p] for p in order]


def _chunk_rows(db, ids, finder) -> dict[int, tuple]:
    """chunk id → (page id, text, the query tokens its title, aliases, heading path or text hold)."""
    ids = list(ids)
    if not ids:
        return {}
    rows = db.execute(
        "SELECT c.id, c.page_id, c.heading_path, c.text, p.title, "
        "(SELECT group_concat(a.alias, ' ') FROM aliases a WHERE a.page_id = c.page_id) "
        f"FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.id IN ({_marks(ids)})", ids)
    return {cid: (pid, text, finder.found(f"{title}\n{aliases or ''}\n{path}\n{text}"))
            for cid, pid, path, text, title, aliases in rows}


def _keyword_pages(db, keyword, tokens, key, limit, viewer: Viewer, idf, chunks, finder):
    """([(page_id, chunk_id, score)] best first, one per page; every hit [(score, chunk_id, page_id)]
    in that order); fills `chunks` (see _chunk_rows) for the chunks it re-scored."""
    if keyword is None or not tokens:
        return [], []
    want = max(limit * 4, 40)
    hidden = not viewer.sees_private
    hits = keyword.search(tokens, want, exclude_private=hidden, key=key)
    if len(_dedup_pages(hits)) < limit and len(hits) == want:
        # pages with many matching chunks crowded the list: look deeper once
        hits = keyword.search(tokens, want * 8, exclude_private=hidden, key=key)
    if len(idf) < 2 or not hits:   # one query word: every hit holds it, nothing to re-score
        return _dedup_pages(hits), hits
    # re-score the best chunks: BM25 as a share of the best, plus how much of the query each holds
    top, rest = hits[:RERANK_N], hits[RERANK_N:]
    chunks.update(_chunk_rows(db, [c for _, c, _ in top], finder))
    best = top[0][0] or 1.0
    scored = [(s / best + COVER_WEIGHT * coverage(idf, chunks[c][2]) if c in chunks else s / best, c, p)
              for s, c, p in top]
    scored.sort(key=lambda h: -h[0])
    ranked = scored + [(s / best, c, p) for s, c, p in rest]
    return _dedup_pages(ranked), ranked


def _body_chunks(db, ranked) -> dict[int, int]:
    """page id → its best keyword chunk that is not the page's card: the passage to show
    (a card says what the page is; the answer is in its body)."""
    ids = [c for _, c, _ in ranked]
    if not ids:
        return {}
    cards = {c for (c,) in db.execute(f"SELECT id FROM chunks WHERE ord = ? AND id IN ({_marks(ids)})",
                                      [CARD_ORD, *ids])}
    out: dict[int, int] = {}
    for _, cid, pid in ranked:
        if cid not in cards:
            out.setdefault(pid, cid)
    return out


def _most_telling(candidates: list[int], chunks: dict, idf: dict[str, float]) -> int | None:
    """The candidate chunk holding the most of the query (idf-weighted); the first on a tie."""
    known = [c for c in candidates if c in chunks]
    if not known:
        return candidates[0] if candidates else None
    return max(known, key=lambda c: (coverage(idf, chunks[c][2]), -known.index(c)))


def _exact_pages(db, query: str, viewer: Viewer):
    """(alias-hit page ids, whole-title page ids): the query as written first, then in the
    other number (number_forms)."""
    vis = hide_private(viewer, "p.visibility")

    def lookup(sql: str, keys: list[str]) -> list[int]:
        out: list[int] = []
        for k in keys:
            for (pid,) in db.execute(sql, (k, MAX_EXACT)):
                if pid not in out:
                    out.append(pid)
        return out[:MAX_EXACT]

    alias_ids = lookup(f"SELECT p.id FROM aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = ?{vis} "
                       "ORDER BY p.id LIMIT ?", number_forms(normalize_alias(query)))
    title_ids = lookup(f"SELECT p.id FROM pages p WHERE p.title_key = ?{vis} ORDER BY p.id LIMIT ?",
                       number_forms(" ".join(query.lower().split())))
    return alias_ids, title_ids


def _heading_pages(keyword, key: str, viewer: Viewer) -> dict[int, int]:
    """page id → the chunk under a heading equal to the query."""
    if keyword is None or not key:
        return {}
    out: dict[int, int] = {}
    for chunk_id, page_id in keyword.heading_pages(key, MAX_EXACT * 4, exclude_private=not viewer.sees_private):
        out.setdefault(page_id, chunk_id)
    return out


def _vector_pages(embedder, vectors, query: str, limit: int):
    """([(page_id, chunk_id, cosine)] by nearest body chunk, the same by nearest card), best first,
    one per page each."""
    import numpy as np  # only once vectors exist

    vec = np.asarray(embedder.embed([query]), dtype=np.float32)[0]
    body: list[tuple[float, int, int]] = []
    cards: list[tuple[float, int, int]] = []
    for cid, pid, ord_, cos in vectors.query_chunks(vec, max(limit * 4, VECTOR_DEPTH)):
        (cards if ord_ == CARD_ORD else body).append((cos, cid, pid))
    body.sort(key=lambda h: -h[0])
    cards.sort(key=lambda h: -h[0])
    return _dedup_pages(body), _dedup_pages(cards)


def search_pages(db, keyword, vault, query: str, limit: int, *, viewer: Viewer = WORLD, embedder=None, vectors=None):
    """(results, degraded reason or None) as `viewer` may see them; never raises on any query text.
    db: the page tables; keyword: the keyword index (None: not built yet); vault: the folder, for staleness."""
    use_vectors = embedder is not None and vectors is not None and bool(getattr(vectors, "ready", False))
    degraded = None if use_vectors else KEYWORD_ONLY
    q = " ".join((query or "").split())
    if not q or limit <= 0:
        return [], degraded
    tokens = query_tokens(q)
    key = text_key(q)
    wanted = content_tokens(tokens)
    idf = keyword.idf(wanted) if keyword is not None else {}
    finder = TermFinder(wanted)
    chunks: dict[int, tuple] = {}
    alias_ids, title_ids = _exact_pages(db, q, viewer)
    heading_chunk = _heading_pages(keyword, key, viewer)
    kw, kw_ranked = _keyword_pages(db, keyword, tokens, key, limit, viewer, idf, chunks, finder)
    vec, cards = [], []
    if use_vectors:
        try:
            vec, cards = _vector_pages(embedder, vectors, q, limit)
        except Exception:  # a vector failure degrades the search, never fails it
            log.warning("vector search failed; answering from keywords", exc_info=True)
            degraded = KEYWORD_ONLY

    cover = {pid: coverage(idf, chunks[cid][2]) for pid, cid, _ in kw if cid in chunks}
    fused = fuse(kw, cover, vec, cards, words=len(wanted))
    near = {pid: cos for pid, _, cos in cards}
    near.update((pid, max(cos, near.get(pid, cos))) for pid, _, cos in vec)
    found = {pid for pid, _, _ in kw}
    fused = {pid: f for pid, f in fused.items() if pid in found or near.get(pid, 0.0) >= MIN_VECTOR}
    exact_arm: dict[int, str] = {}
    for arm, ids in (("alias", alias_ids), ("title", title_ids),
                     ("heading", sorted(heading_chunk, key=lambda p: -fused.get(p, 0.0)))):
        for pid in ids:
            exact_arm.setdefault(pid, arm)
    order = list(exact_arm) + sorted((p for p in fused if p not in exact_arm), key=lambda p: -fused[p])
    if not order:
        return [], degraded
    order = order[: max(limit * 2, limit + len(exact_arm))]

    kw_chunk = {pid: cid for pid, cid, _ in kw}
    kw_body = _body_chunks(db, [h for h in kw_ranked if h[2] in set(order)])
    card_hit = {pid: (cid, cos) for pid, cid, cos in cards}
    vec_hit = {pid: (cid, cos) for pid, cid, cos in vec}
    # the passage: a heading equal to the query, else the body chunk that holds more of the query
    # of the best keyword one and the nearest in meaning, else the card when only the card matched
    body = {p: [c for c in (kw_body.get(p), vec_hit[p][0] if p in vec_hit else None) if c is not None]
            for p in order}
    chunks.update(_chunk_rows(db, {c for cs in body.values() for c in cs} - set(chunks), finder))
    shown = {p: heading_chunk.get(p) or _most_telling(body[p], chunks, idf)
             or kw_chunk.get(p) or (card_hit[p][0] if p in card_hit else None) for p in order}
    vec_hit = {**card_hit, **vec_hit}   # evidence: a body chunk's cosine before the card's
    missing = [p for p in order if shown[p] is None]
    if missing:   # an exact hit with no matching chunk shows its page's opening
        shown.update(db.execute(f"SELECT page_id, id FROM chunks WHERE page_id IN ({_marks(missing)}) AND ord = 0",
                                missing).fetchall())
    chunks.update(_chunk_rows(db, {c for c in shown.values() if c is not None} - set(chunks), finder))
    rows = {r["id"]: r for r in db.execute(
        "SELECT id, slug, title, path, visibility, mtime_ns, size, indexed_at FROM pages "
        f"WHERE id IN ({_marks(order)})", order)}

    top = max(fused.values(), default=0.0) or 1.0
    # each page's best place by meaning (evidence.py AGREE); None when the vectors took no part
    meaning: dict[int, int] | None = None
    if degraded is None:
        meaning = {}
        for hits in (vec, cards):
            for place, (pid, _, _) in enumerate(hits):
                meaning[pid] = min(place, meaning.get(pid, place))
    ranked_scores = sorted(fused.values(), reverse=True)[:2]
    second = ranked_scores[1] if len(ranked_scores) > 1 else 0.0
    results = []
    for pid in order:
        row = rows.get(pid)
        if row is None or not viewer.may_see(row["visibility"]):
            continue
        cid = shown.get(pid)
        text = chunks[cid][1] if cid in chunks else ""
        evidence = evidence_of(exact=exact_arm.get(pid), tokens=tokens, title=row["title"] or "",
                               cosine=vec_hit[pid][1] if pid in vec_hit else None, lexical=pid in kw_chunk,
                               cover=coverage(idf, chunks[cid][2]) if cid in chunks else 0.0,
                               share=fused.get(pid, 0.0) / top,
                               meaning_rank=None if meaning is None else meaning.get(pid, len(fused)),
                               lead=_lead(fused.get(pid, 0.0), top, second))
        results.append({
            "slug": row["slug"],
            "title": row["title"] or row["slug"],
            "chunk": best_passage(text, finder, weights=idf) or None,
            "evidence": evidence,
            "create_safety": CREATE_SAFETY[evidence],
            # rank strength against the best result (1.0); an exact name match ranks as the best
            "score": 1.0 if pid in exact_arm else round(fused.get(pid, 0.0) / top, 3),
            "provenance": row["slug"],
            "indexed_at": row["indexed_at"],
            "stale": _stale(vault, row),
        })
        if len(results) >= limit:
            break
    return results, degraded


def _lead(score: float, best: float, second: float) -> float:
    """A page's score over the best other page's: above 1 only for a leader."""
    other = second if score >= best else best
    return score / other if other > 0 else float("inf")


def _stale(vault, row) -> bool:
    st = stat_page(vault, row["path"])
    return st is None or st.mtime_ns != row["mtime_ns"] or st.size != row["size"]
