"""The limits every cursors store keeps (docs/architecture.md, "Stores"): how long an idle cursor
lives, how many rows one client and all clients together may hold, and who loses rows past that."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from ...indexer.vault.timestamps import iso, utcnow

SOURCE = "default"
IDLE_DAYS = 7
MAX_ROWS_PER_CLIENT = 1000
# all clients together; past it, the client with the most rows loses its oldest
MAX_ROWS_TOTAL = 50_000


def idle_cutoff() -> str:
    """The touched_at before which a cursor is idle and goes."""
    return iso(utcnow() - _dt.timedelta(days=IDLE_DAYS))


def cap_total(rows: int, biggest: Callable[[], tuple[str, str, int] | None],
              cut_oldest: Callable[[str, str, int], object]) -> None:
    """Keep a store of `rows` cursors under MAX_ROWS_TOTAL however many clients there are.

    The rows go from whichever client holds the most (`biggest()`: its source, client id
    and row count), its oldest first (`cut_oldest(source, client, n)`), so a flood spread
    over many client ids still evicts only the flooders' own cursors.
    """
    over = rows - MAX_ROWS_TOTAL
    while over > 0:
        top = biggest()
        if top is None:
            return
        source, client, held = top
        cut = min(over, max(1, int(held) - 1))
        cut_oldest(source, client, cut)
        over -= cut
