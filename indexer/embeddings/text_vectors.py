"""One text's vector, made once (docs/architecture.md, "On the hot path").

A call needs at most one embedding: recall's query, or the fact remember
compares. The vectors of recent texts are kept (a query the facts arm used
serves the page arm; a fact compared is stored right after), a text being
embedded now is waited for rather than embedded again, and texts that differ
only in spacing share one. The prefetch threads embed a call's one text while
the call does its keyword work (`prefetch`); they never queue: with every thread
busy, the caller embeds it itself when it needs it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

import numpy as np

R = TypeVar("R")

# recent texts' vectors: 256 x 384 floats is 400 KB
_QUERY_CACHE = 256
# threads that embed a request's one text while the request does its keyword work (a core each)
PREFETCH_THREADS = 2


def _same_tokens(text: str) -> str:
    """The key of a text's vector: runs of whitespace tokenize alike, so they embed alike."""
    return " ".join(text.split())


class TextVectors:
    """Unit vectors of single texts by one embedder: recent ones kept, each made once."""

    def __init__(self, embedder):
        self.embedder = embedder
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._in_flight: dict[str, Future] = {}   # texts being embedded now, by key
        self._recent_lock = threading.Lock()
        self._prefetch_pool: ThreadPoolExecutor | None = None
        self._tasks = 0    # prefetch tasks queued or running on that pool
        self._closed = False
        self.embedded = 0

    @property
    def tasks(self) -> int:
        """Tasks on the prefetch threads now (queued or running)."""
        return self._tasks

    def recent(self, text: str) -> np.ndarray | None:
        """The vector of `text` if it was embedded lately, else None (nothing is embedded)."""
        with self._recent_lock:
            return self._recent.get(_same_tokens(text))

    def vector(self, text: str) -> np.ndarray:
        """The unit vector of one text: recent texts are not embedded twice, and a text being
        embedded (a prefetch) is waited for, not embedded again."""
        key = _same_tokens(text)
        with self._recent_lock:
            hit = self._recent.get(key)
            if hit is not None:
                self._recent.move_to_end(key)
                return hit
            pending = self._in_flight.get(key)
            if pending is None:
                mine = self._in_flight[key] = Future()
        if pending is not None:
            return pending.result()
        try:
            vec = self.embedder.embed([key])[0]
        except BaseException as e:
            with self._recent_lock:
                self._in_flight.pop(key, None)
            mine.set_exception(e)
            raise
        self.embedded += 1
        with self._recent_lock:
            self._recent[key] = vec
            while len(self._recent) > _QUERY_CACHE:
                self._recent.popitem(last=False)
            self._in_flight.pop(key, None)
        mine.set_result(vec)
        return vec

    def prefetch(self, text: str) -> None:
        """Start embedding `text` on another thread, so the model works while the caller does its
        keyword work; `vector(text)` then waits for it. Never blocks, never raises."""
        key = _same_tokens(text)
        if not key:
            return
        with self._recent_lock:
            # every thread busy: a queued prefetch would start after the caller needs it
            if self._closed or key in self._recent or key in self._in_flight or self._tasks >= PREFETCH_THREADS:
                return
            pool = self._pool()
        self._submit(pool, self._quietly, key)

    def _pool(self) -> ThreadPoolExecutor:
        """The prefetch threads, with one more task counted on them (under _recent_lock)."""
        if self._prefetch_pool is None:
            self._prefetch_pool = ThreadPoolExecutor(PREFETCH_THREADS, thread_name_prefix="brain-prefetch")
        self._tasks += 1
        return self._prefetch_pool

    def _submit(self, pool: ThreadPoolExecutor, fn: Callable[..., R], *args) -> "Future[R] | None":
        def counted() -> R:
            try:
                return fn(*args)
            finally:
                with self._recent_lock:
                    self._tasks -= 1

        try:
            return pool.submit(counted)
        except RuntimeError:  # shut down meanwhile: the caller does it itself
            with self._recent_lock:
                self._tasks -= 1
            return None

    def _quietly(self, key: str) -> None:
        try:
            self.vector(key)
        except Exception:  # a caller waiting on it gets the error; a later call embeds afresh
            pass

    def close(self) -> None:
        with self._recent_lock:
            self._closed = True
            pool, self._prefetch_pool = self._prefetch_pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
