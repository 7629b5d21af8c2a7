"""Chunk vectors: one embedding per distinct chunk content, in an hnswlib index.

A vector belongs to a chunk *content hash*, not to a chunk row: chunks that
share a hash share a vector, a page rename or re-chunk that keeps the text
costs no embedding, and a restart re-embeds nothing that is already stored.
`query` maps hashes back to the chunk ids that currently carry them (the
chunks table is the truth), so a vector whose chunks are gone answers nothing.

The graph and its sidecar live in the cache dir (see vector_files.py); one
built for another model or dimension is discarded and everything re-embedded.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from . import vector_files
from .build_order import BuildMeter, hash_order
from .vector_files import SIDECAR  # noqa: F401  (re-exported: callers name the sidecar from here)

log = logging.getLogger("brain.vectors")

# Tuned on real MiniLM vectors (bench/bench_vectors.py): recall@10 vs exact ≥ 0.95.
DEFAULT_M = 32
DEFAULT_EF_CONSTRUCTION = 200
DEFAULT_EF = 128
EMBED_BATCH = 8           # chunks per background embed call: the lane yields to queries between batches
WINDOW = 256              # pending texts fetched and length-sorted at a time
SAVE_EVERY_S = 30.0       # debounce for persisting incremental changes
PER_HASH_CAP = 10         # chunk ids returned for one shared content


def _sqlite_path(db: sqlite3.Connection | str | Path) -> str | None:
    if isinstance(db, (str, Path)):
        return str(db)
    row = db.execute("PRAGMA database_list").fetchone()
    return row[2] or None


class ChunkVectors:
    """hnswlib cosine index over the chunks table, kept in step with it.

    Use: `build(progress)` once (loads what is stored, embeds what is
    missing, sets `ready`), then `start()` the worker that applies
    `on_chunks_changed` events; `query(vec, k)` → [(chunk_id, cosine)].
    """

    def __init__(self, db: sqlite3.Connection | str | Path, cache_dir: Path, embedder, *,
                 m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION, ef: int = DEFAULT_EF,
                 batch: int = EMBED_BATCH, save_every_s: float = SAVE_EVERY_S, capacity: int = 1024):
        self.dir = Path(cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        path = _sqlite_path(db)
        # our own connection: reads get a consistent snapshot and never interleave
        # with another thread's transaction on a shared connection
        if path:
            self.db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._own_db = True
        else:
            self.db = db
            self._own_db = False
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.dim = int(embedder.dim)
        self.m, self.ef_construction, self.ef = m, ef_construction, ef
        self.batch = batch
        self.save_every_s = save_every_s
        self.capacity = capacity         # initial slots of a new graph; grows by doubling
        self.workers = max(1, int(getattr(embedder, "workers", 1)))
        self.meter = BuildMeter(self.workers)
        self._pool = None                # ThreadPoolExecutor of the build workers, made on first use

        self.ready = False
        self.state = "idle"              # idle → building → ready; "closed" after close()
        self.progress = (0, 0)           # (embedded, to embed) of the current build
        self.embedded = 0                # texts this instance has embedded (restarts should add 0)
        self.error: str | None = None

        self._lock = threading.RLock()   # the graph and every map below
        self._drain_lock = threading.Lock()  # one embedder of pending work at a time
        self._index = None               # hnswlib.Index
        self._generation = 0
        self._labels: list[str | None] = []   # label → hash (live or tombstoned)
        self._live: dict[str, int] = {}        # hash → label, searchable
        self._tomb: dict[str, int] = {}        # hash → label, marked deleted, revivable or reusable
        self._chunk_hash: dict[int, str] = {}  # chunk id → hash
        self._refs: dict[str, int] = {}        # hash → chunks carrying it
        self._pending: dict[str, None] = {}    # hashes waiting for a vector (ordered set)
        self._dirty = False
        self._last_save = 0.0

        self._events: deque = deque()
        self._wake = threading.Condition()
        self._stop = False
        self._busy = False               # the worker holds events it has not finished applying
        self._worker: threading.Thread | None = None

    # -- persistence ----------------------------------------------------------

    def _fresh(self) -> None:
        self._index = vector_files.new_graph(self.dim, self.capacity, self.m, self.ef_construction)
        self._index.set_ef(self.ef)
        self._labels, self._live, self._tomb = [], {}, {}
        self._dirty = True

    def _load(self) -> bool:
        """Load the stored graph; False (and nothing loaded) if absent, foreign or damaged."""
        stored = vector_files.load(self.dir, self.model_id, self.dim)
        if stored is None:
            return False
        stored.index.set_ef(self.ef)
        self._index = stored.index
        self._generation = stored.generation
        self._labels = stored.labels
        self._live = {h: i for i, h in enumerate(stored.labels) if h is not None and i not in stored.deleted}
        self._tomb = {h: i for i, h in enumerate(stored.labels) if h is not None and i in stored.deleted}
        self.m = stored.m or self.m
        self.ef_construction = stored.ef_construction or self.ef_construction
        return True

    def save(self) -> None:
        """Persist graph + sidecar atomically (see vector_files.save)."""
        with self._lock:
            if self._index is None or not self._dirty:
                return
            stored = vector_files.Stored(self._index, self._labels, set(self._tomb.values()), self._generation,
                                         self.m, self.ef_construction)
            self._generation = vector_files.save(self.dir, stored, self.model_id, self.dim)
            self._dirty = False
            self._last_save = time.monotonic()

    # -- the chunk map --------------------------------------------------------

    def _count(self, h: str, delta: int) -> None:
        """Adjust how many chunks carry `h`; start or stop needing its vector at the edges."""
        n = self._refs.get(h, 0) + delta
        if n > 0:
            self._refs[h] = n
            if n == delta:  # 0 → n: wanted again
                self._want(h)
            return
        self._refs.pop(h, None)
        self._pending.pop(h, None)
        label = self._live.pop(h, None)
        if label is not None:
            self._index.mark_deleted(label)
            self._tomb[h] = label
            self._dirty = True

    def _want(self, h: str) -> None:
        if h in self._live or h in self._pending:
            return
        label = self._tomb.pop(h, None)
        if label is not None:  # the same content came back (rename, undo): no embedding
            self._index.unmark_deleted(label)
            self._live[h] = label
            self._dirty = True
        else:
            self._pending[h] = None

    def _apply(self, added: Iterable[tuple[int, str]], removed: Iterable[int]) -> None:
        # removals first: SQLite may hand a freed chunk id to a new row in the same batch
        for cid in removed:
            h = self._chunk_hash.pop(cid, None)
            if h is not None:
                self._count(h, -1)
        for cid, h in added:
            old = self._chunk_hash.get(cid)
            if old == h:
                continue
            if old is not None:
                self._count(old, -1)
            self._chunk_hash[cid] = h
            self._count(h, +1)

    def reconcile(self) -> int:
        """Diff against the whole chunks table; returns how many contents now need embedding."""
        rows = self.db.execute("SELECT id, hash FROM chunks").fetchall()
        current = {int(r[0]): r[1] for r in rows}
        with self._lock:
            gone = [cid for cid in self._chunk_hash if cid not in current]
            changed = [(cid, h) for cid, h in current.items() if self._chunk_hash.get(cid) != h]
            self._apply(changed, gone)
            # anything stored for content no chunk carries (stale from an older run)
            for h in [h for h in self._live if h not in self._refs]:
                label = self._live.pop(h)
                self._index.mark_deleted(label)
                self._tomb[h] = label
                self._dirty = True
            return len(self._pending)

    # -- embedding ------------------------------------------------------------

    def _texts(self, hashes: list[str]) -> dict[str, str]:
        # exactly what the chunk hash covers (heading + text), so equal hash ⇔ equal vector
        marks = ",".join("?" * len(hashes))
        rows = self.db.execute(
            f"SELECT hash, heading, text FROM chunks WHERE hash IN ({marks}) GROUP BY hash", hashes)
        return {h: f"{heading}\n{text}" if heading else text for h, heading, text in rows}

    def _take_window(self) -> list[str]:
        with self._lock:
            return list(islice(self._pending, WINDOW))

    def _add(self, hashes: list[str], vecs: np.ndarray) -> None:
        with self._lock:
            fresh_h, fresh_v = [], []
            for h, v in zip(hashes, vecs):
                if h not in self._pending:  # removed (or already added) while we embedded
                    continue
                del self._pending[h]
                if self._tomb:  # reuse the oldest deleted slot: bring it back, overwrite its vector
                    label = self._tomb.pop(next(iter(self._tomb)))
                    self._index.unmark_deleted(label)
                    self._index.add_items(v[None, :], [label], num_threads=1)
                    self._labels[label] = h
                    self._live[h] = label
                else:
                    fresh_h.append(h)
                    fresh_v.append(v)
            if fresh_h:
                need = len(self._labels) + len(fresh_h)
                cap = self._index.get_max_elements()
                if need > cap:
                    self._index.resize_index(max(need, cap * 2))
                start = len(self._labels)
                labels = list(range(start, start + len(fresh_h)))
                self._index.add_items(np.stack(fresh_v), labels, num_threads=1)
                self._labels.extend(fresh_h)
                for h, label in zip(fresh_h, labels):
                    self._live[h] = label
            self._dirty = True

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
                ordered = sorted(texts, key=lambda h: len(texts[h]))
                batches = [ordered[i:i + self.batch] for i in range(0, len(ordered), self.batch)]
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
                    self.progress = (done, total)
                    self.meter.advance(done, total)
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
        order = hash_order(self.db, wanted)
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

    # -- search ---------------------------------------------------------------

    def query(self, vec, k: int) -> list[tuple[int, float]]:
        """Nearest chunks to a unit query vector: [(chunk_id, cosine)], best first."""
        q = np.asarray(vec, dtype=np.float32).reshape(1, -1)
        with self._lock:
            n = len(self._live)
            if self._index is None or n == 0 or k <= 0:
                return []
            k = min(k, n)
            self._index.set_ef(max(self.ef, k))
            while True:
                try:
                    labels, dists = self._index.knn_query(q, k=k, num_threads=1)
                    break
                except RuntimeError:  # deleted slots can leave fewer than k reachable
                    if k == 1:
                        return []
                    k = max(1, k // 2)
            ranked = [(self._labels[int(lab)], float(1.0 - d)) for lab, d in zip(labels[0], dists[0])]
        hashes = [h for h, _ in ranked]
        marks = ",".join("?" * len(hashes))
        ids: dict[str, list[int]] = {}
        for cid, h in self.db.execute(f"SELECT id, hash FROM chunks WHERE hash IN ({marks}) ORDER BY id", hashes):
            got = ids.setdefault(h, [])
            if len(got) < PER_HASH_CAP:
                got.append(int(cid))
        return [(cid, cos) for h, cos in ranked for cid in ids.get(h, ())]

    def __len__(self) -> int:
        return len(self._live)

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
            if self._own_db:
                self.db.close()
            if got:
                self._drain_lock.release()


def _field(row, name: str, pos: int):
    """A column from a sqlite3.Row, a dict or a plain tuple in `chunks` column order."""
    try:
        return row[name]
    except (TypeError, IndexError, KeyError):
        return row[pos]
