"""Where the fact vectors are kept: the `fact_vectors` table beside the facts in facts.sqlite.

A mixin of `SqliteFactsStore` (store.py), which brings `db` and `lock`. It is the
shelf `indexer/embeddings/fact_vectors.py` (FactVectors) hands vectors to and
takes them from, by fact id, so every query of the facts tables stays in this
package (docs/architecture.md, "Stores"). A vector's key is the model and a
fingerprint of the text it was made from; FactVectors decides whether a key
is current.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING, Sequence

from ...indexer.vault.visibility import Viewer
from ..stores.facts import Fact, FactScope, Order


class FactVectorRows:
    db: sqlite3.Connection
    lock: threading.RLock

    if TYPE_CHECKING:
        def listed(self, scope: FactScope, viewer: Viewer, limit: int | None) -> list[Fact]: ...  # reads.py

    def vectors_current(self, model_id: str) -> bool:
        """Whether every active fact filed under an entity has a vector made by `model_id` from its
        current text (`brain index` then has no fact left to embed)."""
        from ...indexer.embeddings.fact_vectors import all_current  # numpy: not on the CLI's hot path

        facts = self.listed(FactScope(filed=True, order=Order.ID), Viewer.owner(), None)
        return all_current(self.vector_keys(), facts, model_id)

    def stored_vectors(self, ids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        """(fact id, key, vector bytes) of the given facts that have a stored vector."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        with self.lock:
            return [(int(r[0]), r[1], r[2]) for r in self.db.execute(
                f"SELECT id, model, vec FROM fact_vectors WHERE id IN ({marks})", list(ids)).fetchall()]

    def vectors_with_text(self) -> list[tuple[int, str, bytes, str]]:
        """(fact id, key, vector bytes, the fact's current text) of every fact with a stored vector."""
        with self.lock:
            return [(int(r[0]), r[1], r[2], r[3]) for r in self.db.execute(
                "SELECT v.id, v.model, v.vec, f.fact FROM fact_vectors v JOIN facts f ON f.id = v.id").fetchall()]

    def vector_keys(self) -> dict[int, str]:
        """fact id -> the key its stored vector was made under."""
        with self.lock:
            return {int(fid): key for fid, key in self.db.execute("SELECT id, model FROM fact_vectors")}

    def put_vectors(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Keep (fact id, key, vector bytes) rows, all or none."""
        if not rows:
            return
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR REPLACE INTO fact_vectors(id, model, vec) VALUES (?, ?, ?)", rows)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def drop_vectors(self) -> None:
        with self.lock:
            self.db.execute("DELETE FROM fact_vectors")

    def vector_count(self) -> int:
        with self.lock:
            n: int = self.db.execute("SELECT COUNT(*) FROM fact_vectors").fetchone()[0]
        return n
