"""The fact vectors' search matrix (fact_vectors.py): every valid vector by fact id in one
float32 array, scored exactly with one matrix product."""

from __future__ import annotations

from typing import Sequence

import numpy as np


class VectorMatrix:
    """Unit vectors by fact id in one growable float32 matrix (rows reused on replace)."""

    def __init__(self, dim: int):
        self.dim = dim
        self.rows = np.zeros((1024, dim), dtype=np.float32)
        self.ids = np.zeros(1024, dtype=np.int64)
        self.n = 0
        self.pos: dict[int, int] = {}

    def put(self, fid: int, vec: np.ndarray) -> None:
        row = self.pos.get(fid)
        if row is None:
            if self.n == len(self.ids):
                self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
                self.ids = np.concatenate([self.ids, np.zeros_like(self.ids)])
            row = self.n
            self.n += 1
            self.pos[fid] = row
            self.ids[row] = fid
        self.rows[row] = vec

    def scores(self, q: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """fact id -> cosine, for the given ids that have a row (no ranking)."""
        known = [i for i in ids if i in self.pos]
        if not known:
            return {}
        sims = self.rows[[self.pos[i] for i in known]] @ q
        return dict(zip(known, sims.tolist()))

    def top(self, q: np.ndarray, k: int, ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        if ids is None:
            rows = self.rows[:self.n]
            row_ids = self.ids[:self.n]
        else:
            at = np.fromiter((self.pos[i] for i in ids if i in self.pos), dtype=np.int64)
            rows, row_ids = self.rows[at], self.ids[at]
        if k <= 0 or len(row_ids) == 0:
            return []
        scores = rows @ q
        if len(scores) > k:
            best = np.argpartition(-scores, k - 1)[:k]
        else:
            best = np.arange(len(scores))
        best = best[np.argsort(-scores[best], kind="stable")]
        return list(zip(row_ids[best].tolist(), scores[best].tolist()))
