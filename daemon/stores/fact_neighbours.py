"""A fact's neighbours: the facts remembered just before and after it in the same conversation.

The rule both facts stores follow; each finds the steps in its own SQL.

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

from collections.abc import Iterable, Iterator
from datetime import datetime

NEIGHBOUR_GAP_S = 600  # ten minutes
WINDOW = 2             # turns either way (tune set, R@10: 0.568 with 1, 0.588 with 2)

Step = tuple[int, "str | None", str]
"""A fact met walking away from one: (id, entity slug, created_at)."""


def seconds(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def walk(created_at: str, steps: Iterable[Step]) -> Iterator[tuple[int, int]]:
    """(neighbour id, turns away) along one way from a fact saved at `created_at`: `steps` are
    the facts of its conversation saved after (or before) it, nearest first, at most WINDOW of
    them. The walk stops at a fact filed under an entity, or one saved more than
    NEIGHBOUR_GAP_S from the step before."""
    last = seconds(created_at)
    for turns, (nid, entity, at) in enumerate(steps, 1):
        t = seconds(at)
        if entity is not None or abs(t - last) > NEIGHBOUR_GAP_S:
            return
        yield nid, turns
        last = t


def both_ways(pairs: dict[int, list[tuple[int, int]]]) -> dict[int, dict[int, int]]:
    """fact id -> {neighbour id: turns apart} from the walks away from some facts: a neighbour
    relation holds both ways, the fewest turns kept."""
    out: dict[int, dict[int, int]] = {}
    for i, js in pairs.items():
        for j, d in js:
            for a, b in ((i, j), (j, i)):
                out.setdefault(a, {})[b] = min(d, out.get(a, {}).get(b, d))
    return out
