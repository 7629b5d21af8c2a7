"""Which chunks the vector build embeds first, and how fast it is going.

Semantic recall is useful long before a big build ends if the pages people
are most likely to ask about come first. Three orders of the pages are
interleaved (one page from each in turn): most recently modified, most
linked to (distinct pages linking in), most recently returned by a search.
A page's chunks follow it in page order.
"""

from __future__ import annotations

import time
from collections import deque
from itertools import zip_longest


def page_order(db) -> list[int]:
    """Page ids, the likeliest to be asked about first."""
    recent = [r[0] for r in db.execute("SELECT id FROM pages ORDER BY updated_at DESC, id")]
    linked = [r[0] for r in db.execute(
        "SELECT to_id FROM links WHERE to_id IS NOT NULL GROUP BY to_id "
        "ORDER BY COUNT(DISTINCT from_id) DESC, to_id")]
    retrieved = [r[0] for r in db.execute(
        "SELECT id FROM pages WHERE last_retrieved_at IS NOT NULL ORDER BY last_retrieved_at DESC, id")]
    seen: dict[int, None] = {}
    for trio in zip_longest(retrieved, recent, linked):
        for pid in trio:
            if pid is not None and pid not in seen:
                seen[pid] = None
    return list(seen)


def hash_order(db, wanted) -> list[str]:
    """`wanted` chunk content hashes in build order (any the chunks table lacks go last)."""
    wanted = set(wanted)
    by_page: dict[int, list[str]] = {}
    for pid, h in db.execute("SELECT page_id, hash FROM chunks ORDER BY page_id, ord"):
        if h in wanted:
            by_page.setdefault(pid, []).append(h)
    out: dict[str, None] = {}
    for pid in page_order(db):
        for h in by_page.pop(pid, ()):
            out.setdefault(h, None)
    for hashes in by_page.values():  # pages with no row in the orders above (none expected)
        for h in hashes:
            out.setdefault(h, None)
    for h in wanted:
        out.setdefault(h, None)
    return list(out)


class BuildMeter:
    """done / total of a build, its rate over the last RATE_WINDOW_S and the time left at that rate."""

    RATE_WINDOW_S = 30.0

    def __init__(self, workers: int = 1):
        self.workers = workers
        self.state = "idle"          # idle → building → done
        self.done = 0
        self.total = 0
        self._started: float | None = None
        self._samples: deque = deque()  # (monotonic time, done)

    def start(self, total: int) -> None:
        now = time.monotonic()
        self.state, self.done, self.total, self._started = "building", 0, total, now
        self._samples = deque([(now, 0)])

    def advance(self, done: int, total: int) -> None:
        now = time.monotonic()
        self.done, self.total = done, max(total, done)
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.RATE_WINDOW_S:
            self._samples.popleft()

    def finish(self) -> None:
        self.state = "done"

    def rate(self) -> float | None:
        if len(self._samples) < 2:
            return None
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 and d1 > d0 else None

    def snapshot(self) -> dict:
        rate = self.rate()
        left = max(0, self.total - self.done)
        building = self.state == "building"
        return {
            "state": self.state, "done": self.done, "total": self.total,
            "rate_chunks_per_s": round(rate, 1) if rate and building else None,
            "eta_s": round(left / rate) if rate and building else (0 if not building else None),
            "elapsed_s": round(time.monotonic() - self._started, 1) if self._started is not None else None,
            "workers": self.workers,
        }
