"""Where the fact vectors are kept on PostgreSQL: `fact_vectors` (pgvector, HNSW on cosine distance).

A mixin of `PgFactsStore` (facts_store.py), which brings `conn()`. It is the
shelf `indexer/embeddings/fact_vectors.py` (FactVectors) hands vectors to and
takes them from, with the same methods as the embedded shelf
(daemon/facts/vector_rows.py): ids, keys (model and text fingerprint) and
float32 bytes. Recall's vector arm reads the column itself, in SQL
(facts_search.py), so no front end loads every vector into memory.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Sequence

import numpy as np
import psycopg

from .page_load import vector_text

_PUT = """
INSERT INTO fact_vectors (id, model, embedding)
SELECT f.id, %(key)s, %(vec)s::vector FROM facts f WHERE f.id = %(id)s
ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, embedding = EXCLUDED.embedding
"""


def _bytes(values: Sequence[float]) -> bytes:
    return np.asarray(values, dtype=np.float32).tobytes()


class FactVectorRows:
    def conn(self, *, hold: bool = False) -> AbstractContextManager[psycopg.Connection]:  # facts_store.py
        raise NotImplementedError

    def stored_vectors(self, ids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        """(fact id, key, vector bytes) of the given facts that have a stored vector."""
        if not ids:
            return []
        with self.conn() as conn:
            rows = conn.execute("SELECT id, model, embedding::real[] FROM fact_vectors WHERE id = ANY(%s)",
                                (list(ids),)).fetchall()
        return [(int(r[0]), r[1], _bytes(r[2])) for r in rows]

    def vectors_with_text(self) -> list[tuple[int, str, bytes, str]]:
        """(fact id, key, vector bytes, the fact's current text) of every fact with a stored vector."""
        with self.conn() as conn:
            rows = conn.execute("SELECT v.id, v.model, v.embedding::real[], f.fact FROM fact_vectors v "
                                "JOIN facts f ON f.id = v.id").fetchall()
        return [(int(r[0]), r[1], _bytes(r[2]), r[3]) for r in rows]

    def vector_keys(self) -> dict[int, str]:
        """fact id -> the key its stored vector was made under."""
        with self.conn() as conn:
            return {int(fid): key for fid, key in conn.execute("SELECT id, model FROM fact_vectors")}

    def put_vectors(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Keep (fact id, key, vector bytes) rows, all or none; a row for a fact not in the table
        is left out (the vectors follow the facts, never the other way)."""
        if not rows:
            return
        params = [{"id": fid, "key": key, "vec": vector_text(np.frombuffer(blob, dtype=np.float32).tolist())}
                  for fid, key, blob in rows]
        with self.conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(_PUT, params)

    def drop_vectors(self) -> None:
        with self.conn() as conn:
            conn.execute("DELETE FROM fact_vectors")

    def vector_count(self) -> int:
        with self.conn() as conn:
            row = conn.execute("SELECT count(*) FROM fact_vectors").fetchone()
        return int(row[0]) if row else 0
