"""Fact embeddings for remember's dedup and supersession (PROTOCOL_NOTES §3.2).

Vectors live in the facts cache (`fact_vectors(id, model, vec)` in
facts.sqlite): derived data that a rebuild recreates from the log. The
`model` column holds the model id and a fingerprint of the embedded text, so
a vector is used only if it was made by the current model from the fact's
current text — a replaced log or a new model can never feed a stale vector
into a dedup decision.

Comparison is exact numpy over a handful of vectors: dedup looks at up to
five active facts of one entity, no index needed.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Iterable, Sequence

import numpy as np

BACKFILL_BATCH = 64
_QUERY_CACHE = 32  # the text remember compares is stored right after: embed it once


def _fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def fact_key(model_id: str, text: str) -> str:
    """What a stored vector's `model` column holds: the model and the text it was made from."""
    return f"{model_id} {_fingerprint(text)}"


class FactVectors:
    """Embeds facts, stores their vectors in the facts cache, finds the nearest."""

    def __init__(self, db, lock, embedder):
        """`db`/`lock`: the facts cache connection and the lock that serialises its use."""
        self.db = db
        self.lock = lock
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.dim = int(embedder.dim)
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()
        self.embedded = 0

    def _key(self, text: str) -> str:
        return fact_key(self.model_id, text)

    def vector(self, text: str) -> np.ndarray:
        """The unit vector of one text (recent texts are not embedded twice)."""
        with self._recent_lock:
            hit = self._recent.get(text)
            if hit is not None:
                self._recent.move_to_end(text)
                return hit
        vec = self.embedder.embed([text])[0]
        self.embedded += 1
        with self._recent_lock:
            self._recent[text] = vec
            while len(self._recent) > _QUERY_CACHE:
                self._recent.popitem(last=False)
        return vec

    def _stored(self, rows: Sequence) -> dict[int, np.ndarray]:
        """Valid stored vectors for these fact rows (current model, current text)."""
        if not rows:
            return {}
        ids = [int(r["id"]) for r in rows]
        marks = ",".join("?" * len(ids))
        with self.lock:
            got = self.db.execute(f"SELECT id, model, vec FROM fact_vectors WHERE id IN ({marks})", ids).fetchall()
        want = {int(r["id"]): self._key(r["fact"]) for r in rows}
        out = {}
        for fid, key, blob in got:
            if want.get(fid) == key and len(blob) == 4 * self.dim:
                out[fid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _put(self, items: Iterable[tuple[int, str, np.ndarray]]) -> None:
        data = [(fid, self._key(text), np.asarray(v, dtype=np.float32).tobytes()) for fid, text, v in items]
        if not data:
            return
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR REPLACE INTO fact_vectors(id, model, vec) VALUES (?, ?, ?)", data)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def store(self, fid: int, text: str) -> None:
        """Embed and keep one fact's vector."""
        self._put([(fid, text, self.vector(text))])

    def nearest(self, candidates: Sequence, text: str):
        """(row, cosine) of the candidate fact closest to `text`, or None without candidates.

        Candidates that have no valid vector yet (saved while the model was
        loading, or before a model change) are embedded and stored now.
        """
        if not candidates:
            return None
        stored = self._stored(candidates)
        missing = [r for r in candidates if int(r["id"]) not in stored]
        if missing:
            vecs = self.embedder.embed([r["fact"] for r in missing])
            self.embedded += len(missing)
            self._put((int(r["id"]), r["fact"], v) for r, v in zip(missing, vecs))
            stored.update({int(r["id"]): v for r, v in zip(missing, vecs)})
        q = self.vector(text)
        matrix = np.stack([stored[int(r["id"])] for r in candidates])
        scores = matrix @ q
        best = int(np.argmax(scores))
        return candidates[best], float(scores[best])

    def backfill(self, rows: Sequence) -> int:
        """Embed every given fact (rows with id, fact) lacking a valid vector; returns how many."""
        rows = list(rows)
        n = 0
        for i in range(0, len(rows), BACKFILL_BATCH):
            part = rows[i:i + BACKFILL_BATCH]
            have = self._stored(part)
            todo = [r for r in part if int(r["id"]) not in have]
            if todo:
                vecs = self.embedder.embed([r["fact"] for r in todo])
                self.embedded += len(todo)
                self._put((int(r["id"]), r["fact"], v) for r, v in zip(todo, vecs))
                n += len(todo)
        return n

    def rebuild(self, rows: Sequence) -> int:
        """Drop every stored fact vector and embed the given facts afresh."""
        with self.lock:
            self.db.execute("DELETE FROM fact_vectors")
        return self.backfill(rows)

    def count(self) -> int:
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM fact_vectors").fetchone()[0]
