"""A fact's neighbours: the facts remembered just before and after it in the same conversation.

An agent remembering a conversation saves its turns one after another with
the same provenance ("conversation h1, session 3, 2024-01-20") or the same
`session_id`. A turn like "take a look at this!" says nothing by itself: its
subject is in the turn before. Recall scores each fact with a share of its
best neighbour's score (docs/architecture.md, "Facts ranking"), so such a
turn rises with the turn that names its subject.

Two facts are neighbours when their ids are consecutive, they share
provenance and session_id, they were saved at most ten minutes apart, and
neither is filed under an entity (a fact about an entity names its subject:
it needs no neighbour to be understood, and it does not come along with one).
"""

from __future__ import annotations

NEIGHBOUR_GAP_DAYS = 10 / (24 * 60)  # ten minutes


def neighbours(store, ids: list[int]) -> dict[int, list[int]]:
    """fact id -> the ids of its neighbours among the facts saved just before and after it."""
    if not ids:
        return {}
    firsts = sorted({i + d for i in ids for d in (-1, 0)})
    marks = ",".join("?" * len(firsts))
    with store.lock:
        pairs = store.db.execute(
            f"SELECT a.id, b.id FROM facts a JOIN facts b ON b.id = a.id + 1 WHERE a.id IN ({marks}) "
            "AND b.source = a.source AND b.source_session IS a.source_session "
            "AND a.entity_slug IS NULL AND b.entity_slug IS NULL "
            "AND abs(julianday(b.created_at) - julianday(a.created_at)) <= ?",
            [*firsts, NEIGHBOUR_GAP_DAYS]).fetchall()
    wanted = set(ids)
    out: dict[int, list[int]] = {}
    for a, b in pairs:
        if a in wanted:
            out.setdefault(a, []).append(b)
        if b in wanted:
            out.setdefault(b, []).append(a)
    return out
