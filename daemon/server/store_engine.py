"""A front end's engine: the verbs over a shared store, holding no state of its own
(docs/scaling.md, "A team brain on PostgreSQL").

`brain serve --http --store URL` builds one of these instead of the daemon's
engine. Everything a verb reads or writes lives in the store: pages (written
there by the one indexer, `brain index --store URL`), facts (durable in the
store before `remember` answers), delta's cursors and the HTTP credentials.
Nothing is kept on this host but the embedding model's export cache, so any
number of front ends can serve one store, and one that dies loses nothing.

The front end never watches or writes the vault: it may run on a host that
has none. The indexer copies facts remembered here into the vault's facts log.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import config as config_mod
from ..stores.cursors import CursorStore
from ..stores.engine import ChatModel, UsageRecorder
from ..stores.facts import FactsStore
from ..stores.pages import PagesStore
from .task_dates import FILE_NAME as TASK_DATES_FILE, SQLiteTaskDates
from .wall_clock import WallClock

if TYPE_CHECKING:
    from ...indexer.embeddings.embedder import Embedder
    from ...indexer.embeddings.fact_vectors import VectorShelf
    from ...indexer.embeddings.model_loader import ModelLoader
    from ..places import Places
    from ..stores.vectors import FactVectorsStore, TextEmbedder, VectorsStore

log = logging.getLogger("brain.front_end")


class StoreIndex:
    """What `status` and the page verbs ask of "the index" on a front end: the store's pages
    are open from the start; their sync is the indexer's business, not this process's."""

    last_sync: str | None = None
    pending_events = 0


class StoreEngine:
    """The Engine (daemon/stores/engine.py) of a stateless front end over a shared store.

    `facts`, `pages` and `cursors` are the store's implementations of the
    contracts; `chunk_vectors(embedder)` makes the store's chunk vectors once
    the model has loaded, and `fact_shelf` is where fact vectors are kept
    (indexer/embeddings/fact_vectors.py, VectorShelf)."""

    def __init__(self, places: Places, cfg: dict | None, *, label: str, facts: FactsStore, pages: PagesStore,
                 cursors: CursorStore, chunk_vectors: Callable[[TextEmbedder], VectorsStore] | None = None,
                 fact_shelf: VectorShelf | None = None, llm: ChatModel | None = None,
                 closers: tuple[Callable[[], None], ...] = ()):
        self.places = places
        self.cfg: dict[str, Any] = dict(cfg or {})
        self.label = label           # what `status` names: the store, never a password (see store_label)
        self.vault = Path(".")       # no vault here: the front end never reads or writes one
        self.state_dir = places.cache_root / "front-end"
        self.facts = facts
        self.pages = pages
        self.cursors = cursors
        # this front end's own file, as the embedded engine's (a team's front ends each keep theirs)
        self.task_dates = SQLiteTaskDates(self.state_dir / TASK_DATES_FILE)
        self.clock = WallClock()
        self.llm = llm
        self.index: StoreIndex | None = StoreIndex()
        self.index_ready = True
        self.index_progress: tuple[int, int] | None = None
        self.embedder: Embedder | None = None
        self.vectors: VectorsStore | None = None
        self.fact_vectors: FactVectorsStore | None = None
        self.models: ModelLoader | None = None
        self.shared_store = True   # other front ends answer from the same store
        self.usage: UsageRecorder | None = None   # `brain usage` reads the daemon's log, not a front end's
        self.stopping = threading.Event()
        self.stop_requested = threading.Event()
        self._chunk_vectors = chunk_vectors
        self._fact_shelf = fact_shelf
        self._closers = closers
        self._closed = False

    def setting(self, key: str) -> Any:
        return config_mod.get(self.cfg, key)

    @property
    def query_embedder(self) -> TextEmbedder | None:
        """The model itself: a front end embeds a page search's query by the model the indexer
        embedded the chunks with."""
        return self.embedder

    def vault_lost(self) -> str | None:
        """A front end holds no vault, so none can go away under it."""
        return None

    def load_models(self, background: bool = True, embedder: Embedder | None = None) -> ModelLoader:
        """Load MiniLM (or use `embedder`, already loaded); search is keyword-only until it is ready."""
        from ...indexer.embeddings.model_loader import ModelLoader

        if not self.setting("embeddings.enabled"):
            self.models = ModelLoader(factory=lambda: None)
            self.models.disable()
            return self.models
        self.models = ModelLoader(factory=(lambda: embedder) if embedder is not None else None,
                                  cache_root=self.places.cache_root, cancel=self.stopping)
        if background:
            self.models.start(then=self._attach_models)
        else:
            self._attach_models(self.models.load())
        return self.models

    def _attach_models(self, embedder: Embedder | None) -> None:
        if embedder is None or self._closed:
            return
        from ...indexer.embeddings.fact_vectors import FactVectors

        if self._fact_shelf is not None:
            fact_vectors = FactVectors(self._fact_shelf, embedder)
            attach = getattr(self.facts, "attach_vectors", None)
            if attach is not None:
                attach(fact_vectors)
            self.fact_vectors = fact_vectors
        self.embedder = embedder
        if self._chunk_vectors is not None:
            self.vectors = self._chunk_vectors(embedder)

    def close(self) -> None:
        self._closed = True
        self.stopping.set()
        for closer in (getattr(self.fact_vectors, "close", None), getattr(self.vectors, "close", None),
                       getattr(self.facts, "close", None), getattr(self.cursors, "close", None),
                       getattr(self.pages, "close", None), self.task_dates.close, *self._closers):
            if closer is not None:
                try:
                    closer()
                except Exception:
                    log.debug("closing", exc_info=True)


def store_label(url: str) -> str:
    """The store's URL as `status` may show it: user, host and database, never a password."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"
