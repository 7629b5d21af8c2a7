"""The limits every cursors store keeps (docs/architecture.md, "Stores"): how long an idle cursor
lives, how many rows one client and all clients together may hold, and who loses rows past that."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from ...indexer.vault.timestamps import iso, utcnow

SOURCE = "default"
IDLE_DAYS = 7
MAX_ROWS_PER_CLIENT = 1000
# all clients together; past it, the least recently used rows idle for longer than FLOOR go
MAX_ROWS_TOTAL = 50_000
# a cursor used within this time is never evicted to make room for another
FLOOR = _dt.timedelta(days=1)


def idle_cutoff() -> str:
    """The touched_at before which a cursor is idle and goes."""
    return iso(utcnow() - _dt.timedelta(days=IDLE_DAYS))


def cap_total(rows: int, cut_idle: Callable[[str, int], int]) -> bool:
    """Keep a store of `rows` cursors under MAX_ROWS_TOTAL however many clients there are; False
    when it stays over.

    The least recently used rows go (`cut_idle(cutoff, n)` removes at most n rows touched before
    `cutoff`, oldest first, and says how many), and only rows idle for longer than FLOOR: a flood
    spread over many namespaces (one per connection is cheap) cannot push out the cursor of a
    caller that woke today. A store that stays over keeps no new cursor (the caller's delta
    answers as without one) rather than drop a live one.
    """
    over = rows - MAX_ROWS_TOTAL
    if over <= 0:
        return True
    return cut_idle(iso(utcnow() - FLOOR), over) >= over
