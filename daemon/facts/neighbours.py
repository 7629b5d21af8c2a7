"""A fact's neighbours: the facts remembered just before and after it in the same conversation.

An agent remembering a conversation saves its turns one after another, each
with its provenance (one for the whole session, "conversation h1, session 3,
2024-01-20", or one per turn, "chat turn 14, 2024-01-20 10:31") and often the
conversation's `session_id`. A turn like "take a look at this!" says nothing
by itself: its subject is in the turn before. Recall scores each fact with a
share of its best neighbour's score (docs/architecture.md, "Facts ranking"),
so such a turn rises with the turn that names its subject.

A conversation is its `session_id` (docs/architecture.md, "Facts ranking"):
facts that share a non-empty session_id are one conversation whatever their
provenance says, so per-turn provenance does not break it apart. Facts with
no session_id are one conversation when they share their provenance. Two
facts with the same provenance but different session ids are different
conversations (two chats opened with the same label), and a fact with a
session_id is never in the conversation of one without. Facts without a
session_id are not grouped by who saved them: the log names the caller only
inside an idempotency key, which a call need not send.

Two facts are neighbours, one turn apart, when one is the next fact saved
after the other in the same conversation (by save time: ids are minted per
device, docs/architecture.md "Fact ids", so they are not consecutive), they
were saved at most ten minutes apart, and neither is filed under an entity
(a fact about an entity names its subject: it needs no neighbour to be
understood, and it does not come along with one). A fact's neighbours reach
WINDOW turns either way, each step one such pair: an answer is often two
turns after its subject ("she renamed the cat" / "to what?" / "Mango").
"""

from __future__ import annotations

from datetime import datetime

NEIGHBOUR_GAP_S = 600  # ten minutes
WINDOW = 2             # turns either way (tune set, R@10: 0.568 with 1, 0.588 with 2)
# the facts saved just after (or before) one, in its conversation: by session_id when it has one
# (steps along facts_session), else by provenance among the facts without (along facts_thread)
_STEP = "SELECT id, entity_slug, created_at FROM facts WHERE {same} AND (created_at, id) {way} (?, ?) " \
        "ORDER BY created_at {order}, id {order} LIMIT ?"
_BY_SESSION = "source_session = ?"
_BY_SOURCE = "source = ? AND source_session IS ?"
_STEPS = {(by_session, way): _STEP.format(same=_BY_SESSION if by_session else _BY_SOURCE, way=way, order=order)
          for by_session in (True, False) for way, order in (("<", "DESC"), (">", "ASC"))}



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
            same = (session,) if session else (source, session)
            for way in ("<", ">"):
                last = _seconds(created)
                steps = store.db.execute(_STEPS[bool(session), way], (*same, created, fid, window)).fetchall()
                for d, (nid, entity, at) in enumerate(steps, 1):
                    t = _seconds(at)
                    if entity is not None or abs(t - last) > NEIGHBOUR_GAP_S:
                        break
                    out.setdefault(fid, []).append((nid, d))
                    last = t
    return out
