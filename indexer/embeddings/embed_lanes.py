"""Two lanes over one embedding model: queries first, the vector build second.

`embed` is the foreground lane (a query, a fact to dedup) and runs at once on
the caller's thread; `embed_background` (the vector build) first waits until
no foreground call is in flight and none ended in the last `HOLD_S`. The
build's threads are niced (`lower_thread_priority`) and hand freed batch
memory back to the system (`release_freed_memory`).
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Sequence

import numpy as np

HOLD_S = 0.05   # a background batch waits this long after a foreground call (calls come in bursts)
MAX_WAIT_S = 0.5  # ...but no longer than this in all: steady queries must not stop the build
# build threads' nice value: a query thread (0) gets about three times their share of a contended
# core, while on a busy machine the build is slowed, not starved (10 left it ~9x behind every
# other process)
BUILD_NICENESS = 5


class PriorityLane:
    """Foreground calls go first; background calls wait until none is in flight or just ended
    (at most `max_wait_s`; the build threads are niced too, so a query still gets the core)."""

    def __init__(self, hold_s: float = HOLD_S, max_wait_s: float = MAX_WAIT_S):
        self.hold_s = hold_s
        self.max_wait_s = max_wait_s
        self._cond = threading.Condition()
        self._in_flight = 0
        self._last_end = 0.0
        self.waits = 0          # background calls that had to wait, for stats

    @contextmanager
    def foreground(self):
        with self._cond:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._last_end = time.monotonic()
                self._cond.notify_all()

    def wait_for_background(self, hold_s: float | None = None) -> None:
        """Return once no foreground call is in flight and none ended in the last `hold_s`
        (default: the lane's), or after `max_wait_s` in all."""
        hold = self.hold_s if hold_s is None else hold_s
        give_up = time.monotonic() + self.max_wait_s
        with self._cond:
            waited = False
            while True:
                now = time.monotonic()
                quiet = now - self._last_end
                if (not self._in_flight and quiet >= hold) or now >= give_up:
                    break
                waited = True
                self._cond.wait(min(give_up - now, self.hold_s if self._in_flight else hold - quiet))
            self.waits += waited


def lower_thread_priority() -> None:
    """Nice the calling thread (Linux: per thread), so a foreground call preempts a build batch."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BUILD_NICENESS)
    except (AttributeError, OSError):
        pass


def release_freed_memory() -> None:
    """Hand memory freed by finished batches back to the system (glibc keeps it otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim


class TwoLanes:
    """`embed` (foreground) and `embed_background` (the build) over a subclass's `_run`."""

    lane: PriorityLane

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self.lane.foreground():
            return self._run(texts)

    def embed_background(self, texts: Sequence[str]) -> np.ndarray:
        self.lane.wait_for_background()
        return self._run(texts)
