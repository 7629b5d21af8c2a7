"""Fact embeddings: remember's dedup and supersession (docs/protocol.md §3.2),
and the vector arm of recall's fact ranking (docs/protocol.md §3.1).

Vectors are kept by the facts store, beside the facts (a `VectorShelf`:
derived data that a rebuild recreates from the log); this module hands it
ids, keys and vector bytes and never queries its tables. A vector's key holds
the model id and a fingerprint of the embedded text, so a vector is used only
if it was made by the current model from the fact's current text — a
replaced log or a new model can never feed a stale vector into a dedup
decision.

A new fact's vector is written after remember has answered (`store_later`,
one writer thread): the answer never needs it. Reads stay consistent with
the writes: dedup and search first take every pending fact's vector (the
writer's, or embedded there and then), so a recall right after a remember
finds the fact by vector. A vector not yet written when the daemon stops is
made again by the backfill at the next start (vectors are derived data).

Dedup compares a handful of vectors (up to five facts of one entity). Search
keeps every valid vector in one in-memory float32 matrix (50K facts × 384 is
75 MB) and scores a query exactly with one matrix product: a few ms at 50K
facts, no approximate index to keep in step with expiries and rewrites.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Protocol, Sequence, TypeVar

import numpy as np

from .text_vectors import TextVectors
from .vector_matrix import VectorMatrix

log = logging.getLogger("brain.fact_vectors")

BACKFILL_BATCH = 64


def _fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def fact_key(model_id: str, text: str) -> str:
    """What a stored vector's `model` column holds: the model and the text it was made from."""
    return f"{model_id} {_fingerprint(text)}"


# what the fact writer waits before embedding: the event loop writes remember's answer meanwhile
# (bench_model_cost.py's calls in its order over a socket, same runs: remember 1.08-1.09x
# keyword-only with it, 1.4x without; the recall that follows 1.9x either way, 2.2x when the
# writer waited out the build's pause instead)
ANSWER_FIRST_S = 0.0005


class FactText(Protocol):
    """A fact as this module needs it: its id and its text."""

    @property
    def id(self) -> int: ...

    @property
    def fact(self) -> str: ...


T = TypeVar("T", bound=FactText)


class VectorShelf(Protocol):
    """Where fact vectors are kept, by fact id (the facts store: daemon/facts/vector_rows.py)."""

    def stored_vectors(self, ids: Sequence[int]) -> list[tuple[int, str, bytes]]: ...

    def vectors_with_text(self) -> list[tuple[int, str, bytes, str]]: ...

    def put_vectors(self, rows: Sequence[tuple[int, str, bytes]]) -> None: ...

    def drop_vectors(self) -> None: ...

    def vector_count(self) -> int: ...


def all_current(keys: dict[int, str], facts: Iterable[FactText], model_id: str) -> bool:
    """Whether every given fact has a vector made by `model_id` from its current text
    (`keys`: fact id -> the key of its stored vector)."""
    return all(keys.get(f.id) == fact_key(model_id, f.fact) for f in facts)


class FactVectors:
    """Embeds facts, keeps their vectors on the facts store's shelf, finds the nearest."""

    def __init__(self, shelf: VectorShelf, embedder):
        self.shelf = shelf
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.dim = int(embedder.dim)
        self.texts = TextVectors(embedder)   # one text's vector, made once
        # recall's queries: by the lighter query model when there is one (query_model.py), which
        # only ranks; a fact's vector, kept or compared by remember, is always the full model's
        light = getattr(embedder, "for_queries", None)
        self.queries = TextVectors(light) if light is not None else self.texts
        self._closed = False
        self._embedded = 0   # facts embedded here (backfill, dedup candidates), beside self.texts'
        self._matrix: VectorMatrix | None = None  # loaded on the first search
        self._matrix_lock = threading.Lock()
        self._pending: dict[int, str] = {}   # fact id -> text: vectors the writer has yet to store
        self._pending_lock = threading.Lock()
        # one thread (started on the first write): writes keep their order and use one core; it
        # runs at the build's lower priority, so the calls that follow a remember keep the core
        self._writer: ThreadPoolExecutor | None = ThreadPoolExecutor(
            1, thread_name_prefix="brain-fact-vectors",
            initializer=getattr(embedder, "prepare_background_thread", None) or (lambda: None))

    def _key(self, text: str) -> str:
        return fact_key(self.model_id, text)

    def vector(self, text: str) -> np.ndarray:
        """The unit vector of one text (text_vectors.py: made once, recent ones kept)."""
        return self.texts.vector(text)

    def query_vector(self, text: str) -> np.ndarray:
        """The unit vector of a search query: by the query model (`queries`), made once."""
        return self.queries.vector(text)

    def prefetch(self, text: str) -> None:
        """Start embedding the text of a fact beside the caller's keyword work (text_vectors.py)."""
        self.texts.prefetch(text)

    def prefetch_query(self, text: str) -> None:
        """Start embedding a search query beside the caller's keyword work."""
        self.queries.prefetch(text)

    @property
    def embedded(self) -> int:
        """Texts this process embedded for facts and queries (for tests and stats)."""
        extra = self.queries.embedded if self.queries is not self.texts else 0
        return self._embedded + self.texts.embedded + extra

    def close(self) -> None:
        self.texts.close()
        self.queries.close()
        with self._pending_lock:
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:  # the write in progress ends before the cache closes; the backfill
            writer.shutdown(wait=True, cancel_futures=True)  # makes the cancelled ones next start

    def _stored(self, rows: Sequence[FactText]) -> dict[int, np.ndarray]:
        """Valid stored vectors for these facts (current model, current text)."""
        if not rows:
            return {}
        got = self.shelf.stored_vectors([r.id for r in rows])
        want = {r.id: self._key(r.fact) for r in rows}
        out = {}
        for fid, key, blob in got:
            if want.get(fid) == key and len(blob) == 4 * self.dim:
                out[fid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _put(self, items: Iterable[tuple[int, str, np.ndarray]]) -> None:
        items = [(fid, text, np.asarray(v, dtype=np.float32)) for fid, text, v in items]
        data = [(fid, self._key(text), v.tobytes()) for fid, text, v in items]
        if not data:
            return
        with self._matrix_lock:
            if self._matrix is not None:
                for fid, _, v in items:
                    self._matrix.put(fid, v)
        self.shelf.put_vectors(data)

    def store(self, fid: int, text: str) -> None:
        """Embed and keep one fact's vector."""
        self._put([(fid, text, self.vector(text))])

    def store_later(self, fid: int, text: str) -> None:
        """Embed and keep one fact's vector on the writer thread; never blocks the caller.
        Until it is stored, `nearest`, `search` and `cosines` use it all the same."""
        with self._pending_lock:
            if self._closed:
                return  # stopping: the backfill at the next start embeds it
            writer = self._writer
            if writer is None:
                return
            self._pending[fid] = text
        try:
            writer.submit(self._write_pending, fid, text)
        except RuntimeError:  # shut down meanwhile: the backfill at the next start embeds it
            pass

    def _write_pending(self, fid: int, text: str) -> None:
        # the answer of the remember that saved it goes out first, then the vector is made at
        # once: a query embedding in flight goes first (a read that needs this vector meanwhile
        # embeds it itself: _settle, nearest), but not the build's pause after one, since the
        # next call is often the recall that needs it (docs/architecture.md, "On the hot path").
        # Behind on a burst of remembers (more facts waiting), those answers are long gone
        with self._pending_lock:
            behind = len(self._pending) > 1
        if not behind:
            time.sleep(ANSWER_FIRST_S)
        lane = getattr(self.embedder, "lane", None)
        if lane is not None:
            lane.wait_for_background(hold_s=0.0)
        try:
            self._put([(fid, text, self.vector(text))])
        except Exception:  # the fact is saved; the backfill at the next start embeds it
            log.warning("could not embed fact #%d", fid, exc_info=True)
        finally:
            with self._pending_lock:
                if self._pending.get(fid) == text:
                    del self._pending[fid]

    def pending(self) -> dict[int, str]:
        """fact id -> text of the vectors not yet stored."""
        with self._pending_lock:
            return dict(self._pending)

    def wait_written(self, timeout: float = 30.0) -> bool:
        """Wait until the writer has stored every pending vector; False on timeout."""
        deadline = time.monotonic() + timeout
        while self.pending():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def _settle(self, matrix: VectorMatrix) -> None:
        """Put every pending fact's vector into the search matrix (read-your-writes): the
        writer's if it has embedded it, else embedded here (the writer then finds it cached)."""
        for fid, text in self.pending().items():
            vec = self.vector(text)
            with self._matrix_lock:
                matrix.put(fid, vec)

    def nearest(self, candidates: Sequence[T], text: str) -> tuple[T, float] | None:
        """(row, cosine) of the candidate fact closest to `text`, or None without candidates.

        Candidates that have no valid vector yet (saved while the model was
        loading, or before a model change) are embedded and stored now.
        """
        if not candidates:
            return None
        stored = self._stored(candidates)
        missing = [r for r in candidates if r.id not in stored]
        known = {r.id: self.texts.recent(r.fact) for r in missing}  # embedded moments ago: not again
        stored.update({fid: v for fid, v in known.items() if v is not None})
        pending = self.pending()  # the writer embeds these now: wait for it, not a second time
        stored.update({r.id: self.vector(r.fact) for r in missing
                       if pending.get(r.id) == r.fact and r.id not in stored})
        missing = [r for r in missing if r.id not in stored]
        if missing:
            vecs = self.embedder.embed([r.fact for r in missing])
            self._embedded += len(missing)
            self._put((r.id, r.fact, v) for r, v in zip(missing, vecs))
            stored.update({r.id: v for r, v in zip(missing, vecs)})
        q = self.vector(text)
        matrix = np.stack([stored[r.id] for r in candidates])
        scores = matrix @ q
        best = int(np.argmax(scores))
        return candidates[best], float(scores[best])

    def backfill(self, facts: Sequence[FactText]) -> int:
        """Embed every given fact lacking a valid vector; returns how many."""
        rows = list(facts)
        n = 0
        for i in range(0, len(rows), BACKFILL_BATCH):
            part = rows[i:i + BACKFILL_BATCH]
            have = self._stored(part)
            todo = [r for r in part if r.id not in have]
            if todo:
                vecs = self.embedder.embed([r.fact for r in todo])
                self._embedded += len(todo)
                self._put((r.id, r.fact, v) for r, v in zip(todo, vecs))
                n += len(todo)
        return n

    def rebuild(self, facts: Sequence[FactText]) -> int:
        """Drop every stored fact vector and embed the given facts afresh."""
        self.shelf.drop_vectors()
        with self._matrix_lock:
            self._matrix = None
        return self.backfill(facts)

    def count(self) -> int:
        return self.shelf.vector_count()

    # -- search -----------------------------------------------------------------

    def query_embedder(self) -> "QueryEmbedder":
        """The embedder for one recall's page arm: the query the facts arm just embedded is reused."""
        return QueryEmbedder(self)

    def load(self) -> VectorMatrix:
        """The matrix of every valid stored vector (built from the cache once)."""
        with self._matrix_lock:
            if self._matrix is not None:
                return self._matrix
        matrix = VectorMatrix(self.dim)
        for fid, key, blob, text in self.shelf.vectors_with_text():
            if key == self._key(text) and len(blob) == 4 * self.dim:
                matrix.put(int(fid), np.frombuffer(blob, dtype=np.float32))
        with self._matrix_lock:
            if self._matrix is None:
                self._matrix = matrix
            return self._matrix

    def search(self, text: str | np.ndarray, k: int, ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(fact id, cosine) of the k facts nearest the query `text` (or a query vector), best
        first; among `ids` when given."""
        q = self.query_vector(text) if isinstance(text, str) else text
        matrix = self.load()
        self._settle(matrix)
        with self._matrix_lock:
            return matrix.top(q, k, ids)


    def cosines(self, text: str | np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """fact id -> cosine to the query `text` (or a query vector), for the given facts that have a vector."""
        if not ids:
            return {}
        q = self.query_vector(text) if isinstance(text, str) else text
        matrix = self.load()
        self._settle(matrix)
        with self._matrix_lock:
            return matrix.scores(q, ids)


class QueryEmbedder:
    """The embedder's interface; a single text comes from the fact vectors' recent texts."""

    def __init__(self, fact_vectors: FactVectors):
        self._fv = fact_vectors
        self.model_id = fact_vectors.model_id
        self.dim = fact_vectors.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if len(texts) == 1:
            return self._fv.query_vector(texts[0])[None, :]
        return self._fv.embedder.embed(texts)
