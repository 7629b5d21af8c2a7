"""Chunk vectors kept built: the content graph (vector_graph.py) plus the work of filling it.

`build` loads what is stored, reconciles with the chunks table and embeds
every content that has no vector yet, most likely asked about first
(build_order.py), in small length-sorted batches on `workers` threads that
yield to queries (embed_lanes.py). Afterwards a worker thread applies each
committed change (`on_chunks_changed`) and embeds new content.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from itertools import islice
from pathlib import Path
from typing import Callable

import numpy as np

from . import vector_files
from .build_order import BuildMeter, hash_order
from .chunk_source import ChunkSource
from .vector_graph import DEFAULT_EF, DEFAULT_EF_CONSTRUCTION, DEFAULT_M, ContentGraph

log = logging.getLogger("brain.vectors")

EMBED_BATCH = 8           # chunks per background embed call at most: the lane yields to queries between batches
# ...and at most this many padded characters (a batch pads to its longest text; about 512 tokens):
# onnxruntime's working memory grows with batch x length², and 8 texts at the 256-token cap took
# 340 MB per call (two workers: the build's 0.9-1.2 GB peak) where 2 took 40 MB, no slower per text
BATCH_CHARS = 2400
TRUNCATED_CHARS = 1200    # about the model's 256-token cap: longer texts cost no more
WINDOW = 256              # pending texts fetched and length-sorted at a time
SAVE_EVERY_S = 30.0       # debounce for persisting incremental changes
# a text's share of the build's work, for its time estimate (build_order.BuildMeter):
# its characters plus a fixed cost, measured on the ONNX embedder at about 0.7 ms a
# text and 26 µs a character for texts of 40–800 characters
TEXT_WORK_CHARS = 26


def _work(text: str) -> int:
    return len(text) + TEXT_WORK_CHARS


def cut_batches(ordered: list[str], length: Callable[[str], int], most: int,
                budget: int = BATCH_CHARS) -> list[list[str]]:
    """Consecutive batches of `ordered` (shortest first) of at most `most` items and at most
    `budget` padded characters: a batch costs its size times its longest (its last) text."""
    batches: list[list[str]] = []
    batch: list[str] = []
    for h in ordered:
        n = min(length(h), TRUNCATED_CHARS)
        if batch and (len(batch) >= most or (len(batch) + 1) * n > budget):
            batches.append(batch)
            batch = []
        batch.append(h)
    if batch:
        batches.append(batch)
    return batches


class ChunkVectors(ContentGraph):
    """The content graph over the chunks table, embedded and kept in step with it.

    Use: `build(progress)` once (loads what is stored, embeds what is
    missing, sets `ready`), then `start()` the worker that applies
    `on_chunks_changed` events; `query(vec, k)` → [(chunk_id, cosine)].
    """

    def __init__(self, chunks: ChunkSource, cache_dir: Path, embedder, *,
                 m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION, ef: int = DEFAULT_EF,
                 batch: int = EMBED_BATCH, save_every_s: float = SAVE_EVERY_S, capacity: int = 1024):
        super().__init__(chunks, cache_dir, embedder.model_id, embedder.dim,
                         m=m, ef_construction=ef_construction, ef=ef, capacity=capacity)
        self.embedder = embedder
        self.batch = batch
        self.save_every_s = save_every_s
        self.workers = max(1, int(getattr(embedder, "workers", 1)))
        self.meter = BuildMeter(self.workers)
        self._pool = None                # ThreadPoolExecutor of the build workers, made on first use

        self.ready = False
        self.state = "idle"              # idle → building → ready; "closed" after close()
        self.progress = (0, 0)           # (embedded, to embed) of the current build
        self.embedded = 0                # texts this instance has embedded (restarts should add 0)
        self.error: str | None = None

        self._drain_lock = threading.Lock()  # one embedder of pending work at a time
        self._events: deque = deque()
        self._wake = threading.Condition()
        self._stop = False
        self._busy = False               # the worker holds events it has not finished applying
        self._worker: threading.Thread | None = None

    # -- embedding ------------------------------------------------------------

    def _texts(self, hashes: list[str]) -> dict[str, str]:
        # exactly what the chunk hash covers (heading + text), so equal hash ⇔ equal vector
        rows = self.chunks.chunk_texts(hashes)
        return {h: f"{heading}\n{text}" if heading else text for h, heading, text in rows}

    def _take_window(self) -> list[str]:
        with self._lock:
            return list(islice(self._pending, WINDOW))

    def _embed_background(self, texts: list[str]) -> np.ndarray:
        run = getattr(self.embedder, "embed_background", None) or self.embedder.embed
        return run(texts)

    def _release_memory(self) -> None:
        release = getattr(self.embedder, "release_memory", None)
        if release is not None:
            release()

    def _workers(self):
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            init = getattr(self.embedder, "prepare_background_thread", None)
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="brain-embed", initializer=init)
        return self._pool

    def _drain(self, progress: Callable[[int, int], None] | None = None, interruptible: bool = False) -> None:
        """Embed pending contents in small batches, `workers` at a time, until none is left.

        Batches are cut from a window of pending texts (taken in build
        order, see build_order.py) sorted by length: a batch pads to its
        longest text, so mixing a heading-only chunk with a 1,500-character
        one would cost the short one the long one's time.
        """
        with self._drain_lock:
            done = 0
            seen_chars = seen_n = chars_done = 0  # the meter's work: characters (see BuildMeter)
            total = len(self._pending)
            self.progress = (0, total)
            if total:
                self.meter.start(total)
            if progress:
                progress(0, total)
            while not self._stop:
                window = self._take_window()
                if not window:
                    break
                texts = self._texts(window)
                with self._lock:
                    for h in window:  # content no chunk carries any more: drop it
                        if h not in texts:
                            self._pending.pop(h, None)
                done += len(window) - len(texts)
                window_chars, window_n = sum(_work(t) for t in texts.values()), len(texts)
                seen_chars, seen_n = seen_chars + window_chars, seen_n + window_n
                ordered = sorted(texts, key=lambda h: len(texts[h]))
                batches = cut_batches(ordered, lambda h: len(texts[h]), self.batch)
                in_flight: deque = deque()
                interrupted = False
                while batches or in_flight:
                    while batches and len(in_flight) < self.workers and not interrupted:
                        if self._stop or (interruptible and self._events):
                            interrupted = True  # apply deletes/changes before embedding more
                            break
                        batch = batches.pop(0)
                        keep = [h for h in batch if h in self._pending]
                        fut = self._workers().submit(self._embed_background, [texts[h] for h in keep]) if keep else None
                        in_flight.append((batch, keep, fut))
                    if not in_flight:
                        break
                    batch, keep, fut = in_flight.popleft()
                    if fut is not None:
                        vecs = fut.result()
                        self.embedded += len(keep)
                        self._add(keep, vecs)
                    done += len(batch)
                    total = max(total, done + len(self._pending))
                    batch_chars = sum(_work(texts[h]) for h in batch)
                    chars_done, window_chars, window_n = (chars_done + batch_chars, window_chars - batch_chars,
                                                          window_n - len(batch))
                    # what is left: this window's texts exactly, the rest at the mean length seen so far
                    beyond = max(0, len(self._pending) - window_n)
                    self.progress = (done, total)
                    self.meter.advance(done, total, work_done=chars_done,
                                       work_left=window_chars + beyond * seen_chars / max(1, seen_n))
                    if progress:
                        progress(done, total)
                self._release_memory()
                if interrupted:
                    return
            if total:
                self.meter.finish()

    def _order_pending(self) -> None:
        """Put what people are likeliest to ask about first (build_order.py)."""
        with self._lock:
            wanted = list(self._pending)
        if len(wanted) <= 1:
            return
        order = hash_order(self.chunks, wanted)
        with self._lock:
            still = self._pending
            self._pending = dict.fromkeys(h for h in order if h in still)
            for h in still:  # arrived while we sorted
                self._pending.setdefault(h, None)

    def build(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Load the stored index, reconcile with the chunks table, embed what is missing.

        `progress(done, total)` is called after every batch (for a progress
        bar). Sets `ready` when done; safe to call again for a full reconcile.
        """
        if self._stop:
            return
        self.state = "building" if not self.ready else self.state
        with self._lock:
            if self._index is None and not self._load():
                vector_files.remove(self.dir)
                self._fresh()
        self.reconcile()
        self._order_pending()
        self._drain(progress)
        if self._stop:
            return
        self.save()
        self.ready = True
        self.state = "ready"

    # -- live updates ---------------------------------------------------------

    def on_chunks_changed(self, added_rows, removed_ids) -> None:
        """Indexer callback after a committed batch: queue it (never blocks on embedding)."""
        added = [(int(_field(r, "id", 0)), _field(r, "hash", 5)) for r in added_rows or ()]
        removed = [int(i) for i in removed_ids or ()]
        with self._wake:
            self._events.append((added, removed))
            self._wake.notify()

    def start(self) -> None:
        """Run the worker that applies queued changes and embeds new content."""
        if self._worker is not None:
            return
        self._worker = threading.Thread(target=self._run, name="brain-vectors", daemon=True)
        self._worker.start()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stop and not self._events and not self._pending and not self._save_due():
                    self._wake.wait(timeout=self.save_every_s)
                if self._stop:
                    return
                events = list(self._events)
                self._events.clear()
                self._busy = True
            try:
                with self._lock:
                    for added, removed in events:
                        self._apply(added, removed)
                    fresh = [h for added, _ in events for _, h in added if h in self._pending]
                    if fresh:  # just saved: the likeliest to be asked about, so ahead of an ongoing build
                        self._pending = {**dict.fromkeys(fresh), **self._pending}
                self._drain(interruptible=True)
                if self._save_due() and not self._events:
                    self.save()
            except Exception as e:  # keep serving what we have; the next build reconciles
                log.warning("vector update failed: %s", e, exc_info=True)
                self.error = f"{type(e).__name__}: {e}"
                time.sleep(1.0)
            finally:
                self._busy = False

    def _save_due(self) -> bool:
        return self._dirty and self.ready and time.monotonic() - self._last_save >= self.save_every_s

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once every queued change is applied and embedded (for callers that need to read their writes)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                idle = not (self._events or self._pending or self._busy or self._drain_lock.locked())
            if idle:
                return True
            time.sleep(0.01)
        return False

    def stats(self) -> dict:
        with self._lock:
            return {"state": self.state, "model": self.model_id, "dim": self.dim, "vectors": len(self._live),
                    "deleted_slots": len(self._tomb), "pending": len(self._pending) + len(self._events),
                    "progress": list(self.progress), "embedded": self.embedded, "error": self.error,
                    "build": self.meter.snapshot()}

    def close(self) -> None:
        """Stop the worker and persist what was built."""
        with self._wake:
            self._stop = True
            self._wake.notify_all()
        if self._worker is not None:
            self._worker.join(timeout=10)
        # a build in another thread stops after its current batch; let it finish that batch
        got = self._drain_lock.acquire(timeout=30)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        try:
            if self.ready:
                self.save()
        finally:
            self.state = "closed"
            self.chunks.close()
            if got:
                self._drain_lock.release()


def _field(row, name: str, pos: int):
    """A column from a sqlite3.Row, a dict or a plain tuple in `chunks` column order."""
    try:
        return row[name]
    except (TypeError, IndexError, KeyError):
        return row[pos]
