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

from datetime import datetime

NEIGHBOUR_GAP_S = 600  # ten minutes
# the fact saved just after (or before) one, in its conversation: one step along facts_thread
_NEXT = ("SELECT id, entity_slug, created_at FROM facts WHERE source = ? AND source_session IS ? "
         "AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 1")
_PREV = ("SELECT id, entity_slug, created_at FROM facts WHERE source = ? AND source_session IS ? "
         "AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 1")


def _seconds(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def neighbours(store, ids: list[int]) -> dict[int, list[int]]:
    """fact id -> the ids of its neighbours among the facts saved just before and after it."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    out: dict[int, list[int]] = {}
    with store.lock:
        rows = store.db.execute(f"SELECT id, source, source_session, created_at FROM facts "
                                f"WHERE id IN ({marks}) AND entity_slug IS NULL", ids).fetchall()
        for fid, source, session, created in rows:
            for sql in (_PREV, _NEXT):
                hit = store.db.execute(sql, (source, session, created, fid)).fetchone()
                if hit and hit[1] is None and abs(_seconds(hit[2]) - _seconds(created)) <= NEIGHBOUR_GAP_S:
                    out.setdefault(fid, []).append(hit[0])
    return out
