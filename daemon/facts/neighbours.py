"""A fact's neighbours: the facts remembered just before and after it in the same conversation.

An agent remembering a conversation saves its turns one after another with
the same provenance ("conversation h1, session 3, 2024-01-20") or the same
`session_id`. A turn like "take a look at this!" says nothing by itself: its
subject is in the turn before. Recall scores each fact with a share of its
best neighbour's score (docs/architecture.md, "Facts ranking"), so such a
turn rises with the turn that names its subject.

Two facts are neighbours, one turn apart, when one is the next fact saved
after the other with the same provenance and session_id (by save time: ids
are minted per device, docs/architecture.md "Fact ids", so they are not
consecutive), they were saved at most ten minutes apart, and neither is
filed under an entity (a fact about an entity names its subject: it needs no
neighbour to be understood, and it does not come along with one). A fact's
neighbours reach WINDOW turns either way, each step one such pair: an answer
is often two turns after its subject ("she renamed the cat" / "to what?" /
"Mango").
"""

from __future__ import annotations

from datetime import datetime

NEIGHBOUR_GAP_S = 600  # ten minutes
WINDOW = 2             # turns either way (tune set, R@10: 0.568 with 1, 0.588 with 2)
# the facts saved just after (or before) one, in its conversation: steps along facts_thread
_NEXT = ("SELECT id, entity_slug, created_at FROM facts WHERE source = ? AND source_session IS ? "
         "AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?")
_PREV = ("SELECT id, entity_slug, created_at FROM facts WHERE source = ? AND source_session IS ? "
         "AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?")


def _seconds(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def neighbours(store, ids: list[int], window: int | None = None) -> dict[int, list[tuple[int, int]]]:
    """fact id -> (neighbour id, how many turns away) for the facts saved up to `window` turns
    before and after it, each step at most NEIGHBOUR_GAP_S after the one before."""
    window = WINDOW if window is None else window
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    out: dict[int, list[tuple[int, int]]] = {}
    with store.lock:
        rows = store.db.execute(f"SELECT id, source, source_session, created_at FROM facts "
                                f"WHERE id IN ({marks}) AND entity_slug IS NULL", ids).fetchall()
        for fid, source, session, created in rows:
            for sql in (_PREV, _NEXT):
                last = _seconds(created)
                steps = store.db.execute(sql, (source, session, created, fid, window)).fetchall()
                for d, (nid, entity, at) in enumerate(steps, 1):
                    t = _seconds(at)
                    if entity is not None or abs(t - last) > NEIGHBOUR_GAP_S:
                        break
                    out.setdefault(fid, []).append((nid, d))
                    last = t
    return out
