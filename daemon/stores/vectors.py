"""The vectors store contracts: chunk vectors and fact vectors (docs/architecture.md, "Stores").

Both answer with ids and scores, never with text: what an id may show a
viewer is decided by the store that owns it (pages, facts), which is asked
for the rows afterwards. The embedded implementations are
`indexer/embeddings/vectors.py` (ChunkVectors, an hnswlib graph over chunk
contents) and `indexer/embeddings/fact_vectors.py` (FactVectors, one exact
matrix kept beside the facts by the facts store).
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from .facts import Fact

Vector = npt.NDArray[np.float32]
Progress = Callable[[int, int], None]
Scored = list[tuple[int, float]]
F = TypeVar("F", bound=Fact)


class TextEmbedder(Protocol):
    """A model that turns texts into unit vectors (indexer/embeddings/embedder.py)."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vector: ...


@runtime_checkable
class VectorsStore(Protocol):
    """What the engine, verbs and CLI may ask of the chunk vectors (page search's vector arm)."""

    ready: bool
    """Whether every chunk has its vector (until then page search is keyword-only)."""

    def build(self, progress: Progress | None = None) -> None:
        """Load what is stored, reconcile it with the chunks, embed what is missing; sets `ready`."""
        ...

    def start(self) -> None:
        """Follow chunk changes from now on (`on_chunks_changed`), embedding in the background."""
        ...

    def on_chunks_changed(self, added_rows: Sequence[object], removed_ids: Sequence[int]) -> None:
        """The page index committed a batch: queue it, never blocking on the model."""
        ...

    def query(self, vec: Vector, k: int) -> Scored:
        """(chunk id, cosine) of the k chunks nearest a unit query vector, best first."""
        ...

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once every queued change is embedded (for a caller reading its own writes)."""
        ...

    def stats(self) -> dict[str, object]:
        """State, model, counts and build progress, for status and `brain index`."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class FactVectorsStore(Protocol):
    """What the engine and the facts store may ask of the fact vectors (remember's dedup, recall's ranking)."""

    def vector(self, text: str) -> Vector:
        """The unit vector of one text, by the model whose vectors are kept (a fact's, remember's)."""
        ...

    def query_vector(self, text: str) -> Vector:
        """The unit vector of a search query: it only ranks, so a lighter model may make it
        (indexer/embeddings/query_model.py)."""
        ...

    def prefetch(self, text: str) -> None:
        """Start embedding a text a call will need; never blocks, never raises."""
        ...

    def prefetch_query(self, text: str) -> None:
        """Start embedding a search query (by the query model) a call will need; never blocks."""
        ...

    def store(self, fid: int, text: str) -> None:
        """Embed and keep one fact's vector."""
        ...

    def store_later(self, fid: int, text: str) -> None:
        """Embed and keep one fact's vector after the call has answered; reads use it meanwhile."""
        ...

    def nearest(self, candidates: Sequence[F], text: str) -> tuple[F, float] | None:
        """The candidate closest to `text` and its cosine; None without candidates."""
        ...

    def backfill(self, facts: Sequence[Fact]) -> int:
        """Embed the given facts that lack a current vector; how many were embedded."""
        ...

    def search(self, text: str | Vector, k: int, ids: Sequence[int] | None = None) -> Scored:
        """(fact id, cosine) of the k facts nearest `text`, best first; among `ids` when given."""
        ...

    def cosines(self, text: str | Vector, ids: Sequence[int]) -> dict[int, float]:
        """fact id -> cosine to `text`, for the given facts that have a vector."""
        ...

    def load(self) -> object:
        """Build the search matrix now, so the first search does not pay for it."""
        ...

    def query_embedder(self) -> TextEmbedder:
        """The embedder for one recall's page arm: the query the facts arm embedded is not embedded again."""
        ...

    def close(self) -> None:
        ...
