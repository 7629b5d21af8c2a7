"""A fact's neighbours: the facts remembered just before and after it in the same conversation.

An agent remembering a conversation saves its turns one after another with
the same provenance ("conversation h1, session 3, 2024-01-20") or the same
`session_id`. A turn like "take a look at this!" says nothing by itself: its
subject is in the turn before. Recall scores each fact with a share of its
best neighbour's score (docs/architecture.md, "Facts ranking"), so such a
turn rises with the turn that names its subject.

Two facts are neighbours when one is the next fact saved after the other
with the same provenance and session_id (by save time: ids are minted per
device, docs/architecture.md "Fact ids", so they are not consecutive), they
were saved at most ten minutes apart, and neither is filed under an entity (a
fact about an entity names its subject: it needs no neighbour to be
understood, and it does not come along with one).
"""

from __future__ import annotations

NEIGHBOUR_GAP = "+10 minutes"
# created_at is written as 2026-12-03T22:24:18.909Z; strftime's %f is seconds with milliseconds
_LATER = f"strftime('%Y-%m-%dT%H:%M:%fZ', a.created_at, '{NEIGHBOUR_GAP}')"
_NEXT = ("SELECT b.id FROM facts b WHERE b.source = a.source AND b.source_session IS a.source_session "
         f"AND b.created_at >= a.created_at AND b.created_at <= {_LATER} "
         "AND (b.created_at > a.created_at OR b.id > a.id) ORDER BY b.created_at, b.id LIMIT 1")


def neighbours(store, ids: list[int]) -> dict[int, list[int]]:
    """fact id -> the ids of its neighbours among the facts saved just before and after it."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    with store.lock:
        # each fact's successor, and the facts whose successor it is (its predecessor)
        pairs = store.db.execute(
            f"SELECT a.id, n.id FROM facts a JOIN facts n ON n.id = ({_NEXT}) "
            f"WHERE a.id IN ({marks}) AND a.entity_slug IS NULL AND n.entity_slug IS NULL", ids).fetchall()
        pairs += store.db.execute(
            f"SELECT a.id, n.id FROM facts n JOIN facts a ON a.source = n.source "
            f"AND a.source_session IS n.source_session AND a.created_at <= n.created_at "
            f"AND a.created_at >= strftime('%Y-%m-%dT%H:%M:%fZ', n.created_at, '-10 minutes') "
            f"WHERE n.id IN ({marks}) AND a.id != n.id AND a.entity_slug IS NULL AND n.entity_slug IS NULL "
            f"AND n.id = ({_NEXT})", ids).fetchall()
    wanted = set(ids)
    out: dict[int, list[int]] = {}
    for a, b in set(pairs):
        if a in wanted and b not in out.get(a, []):
            out.setdefault(a, []).append(b)
        if b in wanted and a not in out.get(b, []):
            out.setdefault(b, []).append(a)
    return out
