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
from typing import Iterable

from .chunk_source import ChunkSource


def page_order(chunks: ChunkSource) -> list[int]:
    """Page ids, the likeliest to be asked about first."""
    recent, linked, retrieved = chunks.page_orders()
    seen: dict[int, None] = {}
    for trio in zip_longest(retrieved, recent, linked):
        for pid in trio:
            if pid is not None and pid not in seen:
                seen[pid] = None
    return list(seen)


def hash_order(chunks: ChunkSource, wanted: Iterable[str]) -> list[str]:
    """`wanted` chunk content hashes in build order (any no chunk carries go last)."""
    wanted = set(wanted)
    by_page: dict[int, list[str]] = {}
    for pid, h in chunks.hashes_by_page():
        if h in wanted:
            by_page.setdefault(pid, []).append(h)
    out: dict[str, None] = {}
    for pid in page_order(chunks):
        for h in by_page.pop(pid, ()):
            out.setdefault(h, None)
    for hashes in by_page.values():  # pages with no row in the orders above (none expected)
        for h in hashes:
            out.setdefault(h, None)
    for h in wanted:
        out.setdefault(h, None)
    return list(out)


class BuildMeter:
    """done / total of a build, its rate over the last RATE_WINDOW_S and the time left at that rate.

    The time left is measured in work, not chunks, when the build reports it
    (`work_done`, `work_left`: characters embedded and still to embed). The
    builder sorts each window of chunks by length, so its first batches are
    the shortest: a chunk rate taken then promised a newcomer "about 9 s" for
    a build that took 32. Characters cost about the same at any point.
    """

    RATE_WINDOW_S = 30.0

    def __init__(self, workers: int = 1):
        self.workers = workers
        self.state = "idle"          # idle → building → done
        self.done = 0
        self.total = 0
        self.work_left: float | None = None
        self._started: float | None = None
        self._samples: deque = deque()  # (monotonic time, done, work done)

    def start(self, total: int) -> None:
        now = time.monotonic()
        self.state, self.done, self.total, self._started = "building", 0, total, now
        self.work_left = None
        # the rate is taken from the first finished batch on: what came before it is
        # start-up (the window's fetch, the embedder's first run), not the pace
        self._samples = deque()

    def advance(self, done: int, total: int, work_done: float | None = None,
                work_left: float | None = None) -> None:
        now = time.monotonic()
        self.done, self.total = done, max(total, done)
        self.work_left = work_left if work_done is not None else None
        self._samples.append((now, done, work_done or 0.0))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.RATE_WINDOW_S:
            self._samples.popleft()

    def finish(self) -> None:
        self.state = "done"

    def rate(self, column: int = 1) -> float | None:
        """Per second over the window: chunks (column 1) or work (column 2)."""
        if len(self._samples) < 2:
            return None
        first, last = self._samples[0], self._samples[-1]
        dt, dv = last[0] - first[0], last[column] - first[column]
        return dv / dt if dt > 0 and dv > 0 else None

    def eta(self) -> float | None:
        if self.work_left is not None:
            work_rate = self.rate(2)
            return self.work_left / work_rate if work_rate else None
        rate = self.rate()
        return max(0, self.total - self.done) / rate if rate else None

    def snapshot(self) -> dict:
        rate = self.rate()
        building = self.state == "building"
        eta = self.eta() if building else 0
        return {
            "state": self.state, "done": self.done, "total": self.total,
            "rate_chunks_per_s": round(rate, 1) if rate and building else None,
            "eta_s": round(eta) if eta is not None else None,
            "elapsed_s": round(time.monotonic() - self._started, 1) if self._started is not None else None,
            "workers": self.workers,
        }
