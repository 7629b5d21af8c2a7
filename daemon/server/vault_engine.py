"""The embedded engine: one vault's facts store, page tables, indexes and models.

Verbs receive an Engine (daemon/stores/engine.py) and a Caller; they never read
config or environment.
The engine is built by an entry point (the daemon, or the CLI with
--no-daemon) from a Places and a config dict.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...indexer.vault.brain_folder import brain_folder
from ...indexer.pages.db import open_db
from ...indexer.pages.store import SqlitePagesStore
from .. import config as config_mod
from ..facts.store import SqliteFactsStore
from ..stores.facts import FactScope, Order
from ...indexer.vault.visibility import Viewer
from ..places import Places
from .cursor_store import FILE_NAME as CURSORS_FILE, SQLiteCursorStore
from .task_dates import FILE_NAME as TASK_DATES_FILE, SQLiteTaskDates
from ..stores.engine import ChatModel
from .usage import UsageLog
from .wall_clock import WallClock
from ..vault_lock import VaultLock

if TYPE_CHECKING:  # names only: the model and the index load in the background, when asked for
    from ...indexer.embeddings.embedder import Embedder
    from ...indexer.embeddings.fact_vectors import FactVectors
    from ...indexer.embeddings.model_loader import ModelLoader
    from ...indexer.embeddings.vectors import ChunkVectors
    from ...indexer.pages.vault_index import VaultIndex
    from ..stores.vectors import TextEmbedder


class VaultEngine:
    """The embedded engine: the Engine a verb is handed (daemon/stores/engine.py) over one vault's
    folder, its caches and its facts logs, used by the daemon and by the CLI's --no-daemon path.

    Every attribute is set here, in `__init__`; nothing sets one later from
    outside (tests/test_engine_attributes.py holds that)."""

    def __init__(self, vault: Path, places: Places, cfg: dict | None = None, *, writer: str | None = None,
                 lock_wait_s: float = 5.0, llm: ChatModel | None = None):
        self.vault: Path = Path(vault).expanduser().resolve()
        self.label = str(self.vault)   # what status names
        self.places = places
        self.cfg: dict[str, Any] = dict(cfg or {})
        self.cache_dir: Path = places.cache_dir(self.vault)
        self.state_dir: Path = places.vault_state_dir(self.vault)
        self.clock = WallClock()
        self.lock = VaultLock(self.vault)
        if writer:
            self.lock.acquire(writer, wait_s=lock_wait_s)
        brain_folder(self.vault)   # a real folder inside the vault, or BrainFolderError
        # every device writes its own log under .brain/facts/; its id lives here, outside the vault
        # (docs/architecture.md, "Two devices, one vault")
        self.facts = SqliteFactsStore.for_vault(self.vault / ".brain", self.cache_dir / "facts.sqlite",
                                          self.state_dir / "device")
        self.page_db: sqlite3.Connection = open_db(self.cache_dir / "index.sqlite")
        self.pages = SqlitePagesStore(self.page_db)   # the pages contract (daemon/stores/pages.py)
        # each fact belongs to the page its filed name means now (docs/architecture.md, "Entity identity")
        self.facts.attach_pages(self.pages)
        self.usage = UsageLog(places.usage_file)
        # delta's cursors: the file opens on first use, and a broken one fails open (cursor_store.py)
        self.cursors = SQLiteCursorStore(self.state_dir / CURSORS_FILE)
        self.task_dates = SQLiteTaskDates(self.state_dir / TASK_DATES_FILE)
        # attached by the indexer / daemon when available
        self.index: VaultIndex | None = None  # keyword search, sync, page writes
        self.index_ready = False  # the index has been reconciled with the folder once
        self.index_progress: tuple[int, int] | None = None  # (files done, files to look at) during that reconcile
        self.embedder: Embedder | None = None  # once the model has loaded
        self.vectors: ChunkVectors | None = None  # vector search over chunks
        self.fact_vectors: FactVectors | None = None  # fact embeddings for remember's dedup, once the model has loaded
        self.models: ModelLoader | None = None  # the model loader: state loading/ready/failed/off + error
        self.shared_store = False  # this process alone answers from these caches
        self.llm = llm           # synthesize's provider, built by the entry point that reads the API keys
        self.stopping = threading.Event()  # set when closing begins: a model export in progress ends
        # set once when the vault went away under this process and it asked itself to stop (server/mcp.py)
        self.stop_requested = threading.Event()
        self._closed = False

    def setting(self, key: str) -> Any:
        return config_mod.get(self.cfg, key)

    @property
    def query_embedder(self) -> TextEmbedder | None:
        """The facts arm's query vectors serve the page arm too: a recall embeds its query once
        (docs/architecture.md, "On the hot path")."""
        return self.fact_vectors.query_embedder() if self.fact_vectors is not None else self.embedder

    def vault_lost(self) -> str | None:
        """Why the vault folder is no longer the one this engine opened (vault_lock.py); None while it is."""
        return self.lock.lost()

    # -- the vault's index and models (indexer/pages/, indexer/embeddings/model_loader.py) --------

    def attach_index(self, watch: bool = False, progress=None):
        """Open the vault index, reconcile it with the folder, and with `watch` follow saves live.

        Only the vault's writer indexes: when another process (the daemon)
        holds the writer lock, the index opens read-only over its caches.
        """
        if self.index is None:
            from ...indexer.pages.vault_index import VaultIndex
            from ..vault_lock import VaultLocked

            read_only = False
            if not self.lock.held:
                try:
                    self.lock.acquire("index", wait_s=0)
                except VaultLocked:
                    read_only = True
            index = VaultIndex(self.vault, self.page_db, self.cache_dir, read_only=read_only)
            index.on_pages_changed.append(self._pages_changed)
            if self.vectors is not None and hasattr(self.vectors, "on_chunks_changed"):
                index.on_chunks_changed.append(self.vectors.on_chunks_changed)
            # first: a reader that sees `index` set finds the store ready
            self.pages.open_files(self.vault, index.keyword, index)
            self.index = index  # readers may search the committed part while it reconciles
            if watch:
                index.start_watching()  # first, so a save during the reconcile is not missed
            if not read_only:
                def track(done: int, total: int) -> None:
                    self.index_progress = (done, total)
                    if progress is not None:
                        progress(done, total)

                index.reconcile(progress=track)
            self.index_ready = True
        elif watch:
            self.index.start_watching()
        return self.index

    def _pages_changed(self, moves: list[tuple[str, str]]) -> None:
        """After an index commit: log the pages that moved, and file facts where their names lead now."""
        if moves:
            self.facts.record_moves(moves)   # reads the records back, and resolves every name again
        else:
            self.facts.refresh_homes(None)

    def load_models(self, background: bool = True, start_after=None, progress=None, embedder=None):
        """Load the embedding model, then fact and chunk vectors; search is keyword-only until done.

        background: load in a thread (the daemon passes `start_after`, set once
        its socket is up). `progress(done, total)` follows the chunk embedding.
        `embedder`: an already-loaded one to use instead of loading MiniLM
        (by default onnxruntime over the cached ONNX export, exported once in
        a child process; see indexer/embeddings/model_loader.py).
        """
        from ...indexer.embeddings.model_loader import ModelLoader

        if not self.setting("embeddings.enabled"):
            return self.models_off()
        self.models = ModelLoader(factory=(lambda: embedder) if embedder is not None else None,
                                  cache_root=self.places.cache_root, cancel=self.stopping)
        if background:
            self.models.start(then=lambda emb: self._attach_models(emb, progress), start_after=start_after)
        else:
            self._attach_models(self.models.load(), progress)
        return self.models

    def models_off(self):
        """Embeddings are off by the settings: say so (state "off") instead of "not loaded"."""
        from ...indexer.embeddings.model_loader import ModelLoader

        self.models = ModelLoader(factory=lambda: None)
        self.models.disable()
        return self.models

    def _attach_models(self, embedder, progress=None) -> None:
        if embedder is None or self._closed:
            return
        from ...indexer.embeddings.fact_vectors import FactVectors
        from ...indexer.embeddings.vectors import ChunkVectors
        from ...indexer.pages.chunk_rows import ChunkRows

        self.fact_vectors = FactVectors(self.facts, embedder)
        self.facts.attach_vectors(self.fact_vectors)  # recall ranks by meaning too from here
        self.embedder = embedder  # dedup is live from here (candidates lacking a vector are embedded on use)
        vectors = ChunkVectors(ChunkRows(self.page_db), self.cache_dir, embedder)
        self.vectors = vectors  # `vectors.ready` stays False (keyword-only) until the build is done
        # set, then look: attach_index may be running in another thread (a double listener is harmless)
        index = self.index
        if index is not None and vectors.on_chunks_changed not in index.on_chunks_changed:
            index.on_chunks_changed.append(vectors.on_chunks_changed)
        vectors.build(progress)
        vectors.start()
        # facts saved while the model was loading (or before a cache rebuild) get their vectors
        self.fact_vectors.backfill(self.facts.listed(FactScope(order=Order.ID_DESC), Viewer.owner(), None))
        self.fact_vectors.load()  # the search matrix, so the first recall does not pay for it

    def close(self) -> None:
        self._closed = True
        self.stopping.set()
        if self.vectors is not None:
            self.vectors.close()
        if self.fact_vectors is not None:
            self.fact_vectors.close()
        if self.index is not None and hasattr(self.index, "close"):
            self.index.close()
        self.facts.close()
        self.cursors.close()
        self.task_dates.close()
        self.page_db.close()
        self.lock.release()
