"""delta's facts arm: newest first, at most 50 a call, and nothing lost
(docs/protocol.md §3.7).

What a caller has been given is a window state: a top keyset T (every fact
up to it was delivered, or is in the backlog) and at most one backlog, the
facts an overflowing call left between a lower keyset L and the oldest fact
it delivered, U. Undelivered = the backlog (L, U) and whatever is newer than
T. A call serves the backlog first, newest first, and only when it is empty
the facts newer than T, newest first; an overflow there leaves the next
backlog. So the first call after a burst shows its newest 50, following
calls page back through the rest, and each fact is delivered exactly once
(keysets are (created_at, id), a total order).

The state travels as an opaque `facts_cursor` string in every answer;
stateless callers pass it back. A session keeps T in its cursor row and the
backlog in a second row of the same store.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from ..protocol.budget import pack_greedy
from ..protocol.errors import InvalidParams
from .delta_streams import FACT_CAP, fact_cost
from ..stores.facts import Fact, FactScope, FactsStore, Order, SavedKey
from ...indexer.vault.visibility import Viewer

BACKLOG_SUFFIX = "\x00facts-backlog"  # the session's backlog row, beside its cursor row

Key = SavedKey  # (created_at, id | None); id None = the whole millisecond bucket at created_at


@dataclass(frozen=True)
class FactsWindow:
    top: Key
    backlog: tuple[Key, Key] | None = None   # (lower L, upper U), both exclusive

    def token(self) -> str:
        low, up = self.backlog or ((None, None), (None, None))
        raw = json.dumps([*self.top, *low, *up], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def window_from_token(token: str) -> FactsWindow:
    """The window a `facts_cursor` names; anything else is invalid_params."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        t_ts, t_id, l_ts, l_id, u_ts, u_id = json.loads(raw)
        for ts in (t_ts, l_ts, u_ts):
            assert ts is None or isinstance(ts, str)
        for fid in (t_id, l_id, u_id):
            assert fid is None or (isinstance(fid, int) and not isinstance(fid, bool))
        assert isinstance(t_ts, str) and (u_ts is None) == (l_ts is None) and (u_ts is None or u_id is not None)
    except Exception:
        raise InvalidParams("facts_cursor is not one this server gave.",
                            "Pass back the facts_cursor of the previous delta answer unchanged, or leave it out "
                            "to start from since / the session's cursor.") from None
    return FactsWindow((t_ts, t_id), ((l_ts, l_id), (u_ts, u_id)) if l_ts is not None else None)


def _fetch(facts: FactsStore, viewer: Viewer, after: Key, before: Key | None = None) -> list[Fact]:
    """The facts saved after `after` (and before `before`), newest first, one past the cap."""
    scope = FactScope(saved_after=after, saved_before=before, order=Order.NEWEST_SAVED)
    return facts.listed(scope, viewer, FACT_CAP + 1)


def key_of(row: Fact) -> Key:
    return (row.created_at, row.id)


@dataclass
class FactsDelivery:
    rows: list[Fact]      # newest first
    pending: bool
    used: int
    dropped: int
    window: FactsWindow   # what the next call starts from


def deliver_facts(facts: FactsStore, window: FactsWindow, viewer: Viewer, budget: int | None) -> FactsDelivery:
    """The next ≤50 undelivered facts of `window` under `budget` (None: no budget;
    the tokens left after the pages otherwise), and the window after them."""
    backlog = _fetch(facts, viewer, window.backlog[0], window.backlog[1]) if window.backlog else []
    newer = _fetch(facts, viewer, window.top)
    offered = (backlog + newer)[:FACT_CAP]
    used = 0
    kept = offered
    if budget is not None:
        kept, used = pack_greedy(offered, [fact_cost(r) for r in offered], max(budget, 0)) if budget > 0 \
            else ([], 0)
    from_backlog, from_newer = kept[:len(backlog)], kept[len(backlog):]
    top, rest = window.top, None
    if window.backlog and (len(from_backlog) < len(backlog) or len(backlog) > FACT_CAP):
        # the backlog is not done: it shrinks to below the oldest fact delivered from it
        rest = (window.backlog[0], key_of(from_backlog[-1])) if from_backlog else window.backlog
    elif from_newer:
        top = key_of(from_newer[0])
        if len(from_newer) < len(newer):   # an overflow: the facts under what was shown wait
            rest = (window.top, key_of(from_newer[-1]))
    pending = rest is not None or len(newer) > len(from_newer)
    return FactsDelivery(from_newer + from_backlog, pending, used, len(offered) - len(kept),
                         FactsWindow(top, rest))
