"""Chunk vectors in PostgreSQL: the `VectorsStore` contract over the chunks' pgvector column.

The second implementation of daemon/stores/vectors.py `VectorsStore` (the
embedded one is indexer/embeddings/vectors.py, an hnswlib graph beside the
SQLite tables). Here each chunk row carries its own `vector(384)` and the
model that made it (schema.py, versions 1 and 20), under an HNSW index on
cosine distance, so the vectors live and die with their chunks: a deleted
chunk takes its vector along, and a chunk kept across an edit keeps it.

What embeds is the process that writes the chunks (the vault indexer,
indexer.py, calls `on_chunks_changed` after each commit); any front end may
`query` and read `ready` without a model of its own: the database says
which model's vectors were last built over every chunk (`index_meta`), and
from then on a few new chunks still waiting for theirs do not turn the
vector arm off (as the embedded vectors stay ready while they catch up). A chunk whose exact text (its hash)
another chunk already has a vector for takes that vector without the model.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Sequence

import psycopg

from ..stores.vectors import Progress, Scored, TextEmbedder, Vector
from .page_load import vector_text
from .page_search import EF_SEARCH

log = logging.getLogger("brain.vectors.postgres")

EMBED_BATCH = 16      # texts per model call (the model pads a batch to its longest text)
WINDOW = 256          # chunks fetched and written per round trip
READY_CHECK_S = 2.0   # how long a front end trusts its last look at whether the vectors are built
BUILT_KEY = "chunk_vectors_built"   # index_meta: the model whose vectors were last built over every chunk

_MISSING = "embedding IS NULL OR embedding_model IS DISTINCT FROM %(model)s"
_SAME_TEXT = """
UPDATE chunks c SET embedding = o.embedding, embedding_model = o.embedding_model
FROM (SELECT DISTINCT ON (hash) hash, embedding, embedding_model FROM chunks
      WHERE embedding IS NOT NULL AND embedding_model = %(model)s) o
WHERE (c.embedding IS NULL OR c.embedding_model IS DISTINCT FROM %(model)s) AND c.hash = o.hash
"""


class PgChunkVectors:
    """`build()` embeds every chunk that lacks a vector of this model; `start()` follows the
    indexer's commits; `query(vec, k)` → [(chunk id, cosine)] by HNSW."""

    def __init__(self, dsn: str, embedder: TextEmbedder | None, *, model_id: str | None = None,
                 batch: int = EMBED_BATCH):
        self.dsn = dsn
        self.embedder = embedder
        self.model_id = model_id or (embedder.model_id if embedder is not None else None)
        self.dim = embedder.dim if embedder is not None else 384
        self.batch = batch
        self.workers = max(1, int(getattr(embedder, "workers", 1)))
        self._pool: Any = None
        self.state = "idle"                 # idle → building → ready; "closed" after close()
        self.embedded = 0                   # texts this instance embedded
        self.progress = (0, 0)
        self.error: str | None = None
        self._built = False
        self._seen_ready: tuple[float, bool] = (0.0, False)
        self._reads = psycopg.connect(dsn, autocommit=True)
        self._read_lock = threading.Lock()   # one transaction at a time on the readers' connection
        self._writes = psycopg.connect(dsn, autocommit=True)
        self._wake = threading.Condition()
        self._events = 0
        self._busy = False
        self._stop = False
        self._worker: threading.Thread | None = None

    # -- the contract -------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether this model's vectors were built over every chunk: by this process, or as the database says."""
        if self._built:
            return True
        at, seen = self._seen_ready
        if time.monotonic() - at > READY_CHECK_S:
            with self._read_lock:
                row = self._reads.execute("SELECT value FROM index_meta WHERE key = %s", (BUILT_KEY,)).fetchone()
            seen = row is not None and self.model_id is not None and row[0] == self.model_id
            self._seen_ready = (time.monotonic(), seen)
        return seen

    def build(self, progress: Progress | None = None) -> None:
        """Embed every chunk lacking a vector of this model (same text: copied, not embedded); sets `ready`."""
        if self.embedder is None:
            raise RuntimeError("these chunk vectors were opened without a model: only `query` and `ready` work; "
                               "embed in the process that runs the vault indexer")
        self.state = "building" if not self._built else self.state
        self._drain(progress)
        if not self._stop:
            self._writes.execute("INSERT INTO index_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) "
                                 "DO UPDATE SET value = EXCLUDED.value", (BUILT_KEY, self.model_id))
            self._built = True
            self.state = "ready"

    def start(self) -> None:
        if self._worker is None and self.embedder is not None:
            self._worker = threading.Thread(target=self._run, name="brain-pg-vectors", daemon=True)
            self._worker.start()

    def on_chunks_changed(self, added_rows: Sequence[object], removed_ids: Sequence[int]) -> None:
        """The indexer committed a batch: look for chunks without a vector (removed ones took theirs along)."""
        if added_rows:
            with self._wake:
                self._events += 1
                self._wake.notify()

    def query(self, vec: Vector, k: int) -> Scored:
        """(chunk id, cosine) of the k chunks nearest a unit vector, best first."""
        with self._read_lock, self._reads.transaction():
            self._reads.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(k))}")
            rows = self._reads.execute("SELECT id, 1 - (embedding <=> %(v)s::vector) FROM chunks "
                                       "WHERE embedding IS NOT NULL ORDER BY embedding <=> %(v)s::vector LIMIT %(k)s",
                                       {"v": vector_text([float(x) for x in vec]), "k": int(k)}).fetchall()
        return [(int(cid), float(cos)) for cid, cos in rows]

    def wait_idle(self, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._wake:
            while self._events or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(min(left, 0.05))
        return True

    def stats(self) -> dict[str, object]:
        with self._read_lock:
            counts = self._reads.execute(
                f"SELECT count(*) FILTER (WHERE NOT ({_MISSING})), count(*) FILTER (WHERE {_MISSING}) FROM chunks",
                {"model": self.model_id}).fetchone()
        have, missing = counts if counts is not None else (0, 0)
        return {"state": self.state, "model": self.model_id, "dim": self.dim, "vectors": int(have),
                "pending": int(missing), "progress": list(self.progress), "embedded": self.embedded,
                "error": self.error, "store": "postgresql"}

    def close(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify_all()
        if self._worker is not None:
            self._worker.join(timeout=30)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.state = "closed"
        self._reads.close()
        self._writes.close()

    # -- embedding ------------------------------------------------------------------

    def _drain(self, progress: Progress | None = None) -> None:
        """Give every chunk lacking a vector one: from a chunk of the same text, else from the model."""
        assert self.embedder is not None
        model = {"model": self.model_id}
        db = self._writes
        db.execute(_SAME_TEXT, model)
        counted = db.execute(f"SELECT count(*) FROM chunks WHERE {_MISSING}", model).fetchone()
        total = int(counted[0]) if counted else 0
        done, after = 0, 0
        self.progress = (0, total)
        while not self._stop:
            rows = db.execute(f"SELECT id, hash, heading, text FROM chunks WHERE ({_MISSING}) AND id > %(after)s "
                              "ORDER BY id LIMIT %(n)s", {**model, "after": after, "n": WINDOW}).fetchall()
            if not rows:
                break
            after = rows[-1][0]
            # exactly what the chunk hash covers (heading and text), as the embedded vectors embed
            texts = [f"{heading}\n{text}" if heading else text for _, _, heading, text in rows]
            vecs = self._embed(texts)
            with db.cursor() as cur:
                cur.executemany("UPDATE chunks SET embedding = %s::vector, embedding_model = %s "
                                "WHERE id = %s AND hash = %s",
                                [(vector_text([float(x) for x in v]), self.model_id, cid, h)
                                 for (cid, h, _, _), v in zip(rows, vecs)])
            done += len(rows)
            self.embedded += len(rows)
            self.progress = (done, max(total, done))
            if progress is not None:
                progress(done, max(total, done))

    def _embed(self, texts: list[str]) -> list[Any]:
        """Vectors of `texts`, a batch per model call, as many calls at once as the model has workers
        (its background lane when it has one, so a query's embedding is not queued behind a build)."""
        assert self.embedder is not None
        run = getattr(self.embedder, "embed_background", None) or self.embedder.embed
        # texts of like length share a batch: the model pads each batch to its longest text
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = [texts[i] for i in order]
        batches = [ordered[i:i + self.batch] for i in range(0, len(ordered), self.batch)]
        if self.workers > 1 and len(batches) > 1:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                init = getattr(self.embedder, "prepare_background_thread", None)
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="brain-pg-embed", initializer=init)
            done = list(self._pool.map(run, batches))
        else:
            done = [run(b) for b in batches]
        vectors: list[Any] = [None] * len(texts)
        for i, v in zip(order, (v for vecs in done for v in vecs)):
            vectors[i] = v
        return vectors

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stop and not self._events:
                    self._wake.wait()
                if self._stop:
                    return
                self._events = 0
                self._busy = True
            try:
                self._drain()
            except Exception as e:   # keep serving what is there; the next commit or build tries again
                log.warning("embedding new chunks failed: %s", e, exc_info=True)
                self.error = f"{type(e).__name__}: {e}"
                time.sleep(1.0)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()
