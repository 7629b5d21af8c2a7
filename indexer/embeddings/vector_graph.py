"""The hnswlib graph of chunk vectors, keyed by content hash, kept in step with the chunks table.

A vector belongs to a chunk *content hash*, not to a chunk row: chunks that
share a hash share a vector, a page rename or re-chunk that keeps the text
costs no embedding, and a restart re-embeds nothing that is already stored.
`query` maps hashes back to the chunk ids that currently carry them (the
chunks table is the truth), so a vector whose chunks are gone answers nothing.

A content no vector covers yet waits in the pending set; `ChunkVectors`
(vectors.py) embeds it and hands the vectors to `_add`. The graph and its
sidecar live in the cache dir (see vector_files.py); one built for another
model or dimension is discarded and everything re-embedded.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from . import vector_files
from .chunk_source import ChunkSource

# Tuned on real MiniLM vectors (bench/bench_vectors.py): recall@10 vs exact ≥ 0.95.
DEFAULT_M = 32
DEFAULT_EF_CONSTRUCTION = 200
DEFAULT_EF = 128
PER_HASH_CAP = 10         # chunk ids returned for one shared content


class ContentGraph:
    """hnswlib cosine index over the distinct contents of the chunks table.

    `reconcile()` diffs against the whole chunks table and `_apply` takes
    committed changes (both fill the pending set), `_add` stores embedded
    vectors, `query(vec, k)` → [(chunk_id, cosine)], `save()` persists.
    """

    def __init__(self, chunks: ChunkSource, cache_dir: Path, model_id: str, dim: int, *,
                 m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION, ef: int = DEFAULT_EF,
                 capacity: int = 1024):
        self.dir = Path(cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.chunks = chunks               # the page store's chunks (chunk_source.py); ours to close
        self.model_id = model_id
        self.dim = int(dim)
        self.m, self.ef_construction, self.ef = m, ef_construction, ef
        self.capacity = capacity         # initial slots of a new graph; grows by doubling

        self._lock = threading.RLock()   # the graph and every map below
        self._index: Any = None          # hnswlib.Index (the library ships no types)
        self._generation = 0
        self._labels: list[str | None] = []   # label → hash (live or tombstoned)
        self._live: dict[str, int] = {}        # hash → label, searchable
        self._tomb: dict[str, int] = {}        # hash → label, marked deleted, revivable or reusable
        self._chunk_hash: dict[int, str] = {}  # chunk id → hash
        self._refs: dict[str, int] = {}        # hash → chunks carrying it
        self._pending: dict[str, None] = {}    # hashes waiting for a vector (ordered set)
        self._dirty = False
        self._last_save = 0.0

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
        current = self.chunks.chunk_hashes()
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

    # -- vectors in ------------------------------------------------------------

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

    # -- search ---------------------------------------------------------------

    def query(self, vec, k: int) -> list[tuple[int, float]]:
        """Nearest chunks to a unit query vector: [(chunk_id, cosine)], best first."""
        return [(cid, cos) for cid, _, _, cos in self.query_chunks(vec, k)]

    def query_chunks(self, vec, k: int) -> list[tuple[int, int, int, float]]:
        """Nearest chunks to a unit query vector with their page: [(chunk_id, page_id, ord,
        cosine)], best first (page search reads them in the same lookup as the ids)."""
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
            # whole arrays to Python at once: element by element, numpy scalars cost more than the search
            cosines = (1.0 - dists[0]).tolist()
            ranked = [(self._labels[lab], cos) for lab, cos in zip(labels[0].tolist(), cosines)]
        hashes = [h for h, _ in ranked]
        rows: dict[str, list[tuple[int, int, int]]] = {}
        for cid, h, pid, ord_ in self.chunks.chunks_carrying(hashes):
            got = rows.setdefault(h, [])
            if len(got) < PER_HASH_CAP:
                got.append((cid, pid, ord_))
        return [(cid, pid, ord_, cos) for h, cos in ranked for cid, pid, ord_ in rows.get(h, ())]

    def __len__(self) -> int:
        return len(self._live)
