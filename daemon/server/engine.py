"""The engine: one vault's facts store, page tables, indexes and models.

Verbs receive an Engine and a Caller; they never read config or environment.
The engine is built by an entry point (the daemon, or the CLI with
--no-daemon) from a Places and a config dict.
"""

from __future__ import annotations

import datetime as _dt
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Callable, TYPE_CHECKING, Any

from ...indexer.vault.brain_folder import brain_folder
from ...indexer.pages.db import open_db
from ...indexer.pages.store import SqlitePagesStore
from ...indexer.embeddings import search_modes as why
from .. import config as config_mod
from ..verbs.entity_slugs import canonical_entity_slug
from ..facts.store import FactsStore
from ..stores.facts import Fact, FactScope, Order
from ...indexer.vault.visibility import Viewer
from ..places import Places
from ...indexer.vault.timestamps import now_iso, utcnow
from ..protocol.caller import Caller
from .cursor_store import FILE_NAME as CURSORS_FILE, SQLiteCursorStore
from ..stores.engine import ChatModel
from .usage import UsageLog
from ..vault_lock import VaultLock

if TYPE_CHECKING:  # names only: the model and the index load in the background, when asked for
    from ...indexer.embeddings.embedder import Embedder
    from ...indexer.embeddings.fact_vectors import FactVectors
    from ...indexer.embeddings.model_loader import ModelLoader
    from ...indexer.embeddings.vectors import ChunkVectors
    from ...indexer.pages.vault_index import VaultIndex

log = logging.getLogger("brain.engine")


class WallClock:
    """The clock a daemon's verbs read (daemon/stores/engine.py, Clock)."""

    def now(self) -> _dt.datetime:
        return utcnow()


class EngineReads:
    """What both engines answer alike from their stores and models: the daemon's (`Engine`) and a
    front end's over a shared store (store_engine.py). Each sets `cfg`, `pages`, `facts`, `models`,
    `embedder`, `vectors` and `fact_vectors` in its own `__init__`."""

    cfg: dict[str, Any]
    pages: Any
    facts: Any
    models: "ModelLoader | None"
    embedder: "Embedder | None"
    vectors: Any
    fact_vectors: "FactVectors | None"

    def setting(self, key: str):
        return config_mod.get(self.cfg, key)

    def canonical_entity(self, name: str, caller: Caller) -> str:
        return canonical_entity_slug(name, self.pages, caller.viewer, self.facts)

    def vectors_missing_cause(self) -> str | None:
        """Why a page search would leave the vectors out now; None when it would use them."""
        state = self.models.state if self.models is not None else None
        if state == why.MODEL_OFF or not self.setting("embeddings.enabled"):
            return why.EMBEDDINGS_OFF
        if state is None:
            return why.MODEL_NOT_LOADED
        if state == "failed":
            return why.MODEL_FAILED
        if state != "ready" or self.embedder is None:
            return why.MODEL_LOADING
        if self.vectors is None or not self.vectors.ready:
            return why.VECTORS_BUILDING
        return None

    def note_retrieved(self, slugs: list[str]) -> None:
        """Bump last_retrieved_at for pages a search returned (feeds entity tie-breaks)."""
        if not slugs:
            return
        try:
            self.pages.note_retrieved(slugs, now_iso())
        except Exception:  # a read must not fail over a bookkeeping write
            log.debug("could not bump last_retrieved_at", exc_info=True)

    def dedup_degraded(self) -> bool:
        return self.embedder is None

    def fact_similarity(self, entity_slug: str, text: str, viewer: Viewer,
                        worth_comparing: Callable[[list[Fact]], bool] | None = None) -> tuple[Fact, float] | None:
        """(fact, cosine) of the nearest of the entity's 5 newest active facts the viewer may see
        (§3.2), or None without a model: a remote caller is never matched against (and so never
        learns of, or supersedes) a private fact. `worth_comparing(facts)` False: the caller's
        answer cannot depend on the cosines, so nothing is embedded (None)."""
        if self.fact_vectors is None:
            return None
        rows = self.facts.listed(FactScope(entity=entity_slug), viewer, 5)
        if worth_comparing is not None and not worth_comparing(rows):
            return None
        return self.fact_vectors.nearest(rows, text)

    def prefetch_embedding(self, text: str, query: bool = False) -> None:
        """Start embedding the one text a call will need (a fact to dedup; with `query`, a search
        query, by the query model) on another thread, so the model runs while the call does its
        keyword work. Nothing happens without the model."""
        fact_vectors = self.fact_vectors
        if fact_vectors is not None and text:
            (fact_vectors.prefetch_query if query else fact_vectors.prefetch)(text)


class Engine(EngineReads):
    """The daemon's implementation of the Engine a verb is handed (daemon/stores/engine.py).

    Every attribute is set here, in `__init__`; nothing sets one later from
    outside (tests/test_engine_attributes.py holds that)."""

    def __init__(self, vault: Path, places: Places, cfg: dict | None = None, *, writer: str | None = None,
                 lock_wait_s: float = 5.0, llm: ChatModel | None = None):
        self.vault: Path = Path(vault).expanduser().resolve()
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
        self.facts = FactsStore.for_vault(self.vault / ".brain", self.cache_dir / "facts.sqlite",
                                          self.state_dir / "device")
        self.page_db: sqlite3.Connection = open_db(self.cache_dir / "index.sqlite")
        self.pages = SqlitePagesStore(self.page_db)   # the pages contract (daemon/stores/pages.py)
        # each fact belongs to the page its filed name means now (docs/architecture.md, "Entity identity")
        self.facts.attach_pages(self.pages)
        self.usage = UsageLog(places.usage_file)
        # delta's cursors: the file opens on first use, and a broken one fails open (cursor_store.py)
        self.cursors = SQLiteCursorStore(self.state_dir / CURSORS_FILE)
        # attached by the indexer / daemon when available
        self.index: VaultIndex | None = None  # keyword search, sync, page writes
        self.index_ready = False  # the index has been reconciled with the folder once
        self.index_progress: tuple[int, int] | None = None  # (files done, files to look at) during that reconcile
        self.embedder: Embedder | None = None  # once the model has loaded
        self.vectors: ChunkVectors | None = None  # vector search over chunks
        self.fact_vectors: FactVectors | None = None  # fact embeddings for remember's dedup, once the model has loaded
        self.models: ModelLoader | None = None  # the model loader: state loading/ready/failed/off + error
        self.llm = llm           # synthesize's provider, built by the entry point that reads the API keys
        self.stopping = threading.Event()  # set when closing begins: a model export in progress ends
        # set once when the vault went away under this process and it asked itself to stop (server/mcp.py)
        self.stop_requested = threading.Event()
        self._closed = False

    # -- the vault's index and models (indexer/pages/, indexer/embeddings/model_loader.py) --------

    def search_pages(self, query: str, limit: int, caller: Caller,
                     keyword_only: bool = False) -> tuple[list[dict], str | None]:
        """Page hits for recall's query arm and, when the vectors took no part, why
        (a cause named in indexer/embeddings/search_modes.py); None when they did. `keyword_only`:
        leave the vectors out (an entity miss's near misses, docs/protocol.md §3.3)."""
        if self.index is None:
            return [], why.INDEX_NOT_OPEN
        if keyword_only:
            return self.pages.search(query, limit, caller.viewer)
        cause = self.vectors_missing_cause()
        embedder = self.fact_vectors.query_embedder() if self.fact_vectors is not None else self.embedder
        results, degraded = self.pages.search(query, limit, caller.viewer, embedder=embedder, vectors=self.vectors)
        if degraded is None:
            return results, None
        return results, cause or why.VECTOR_SEARCH_FAILED

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

        self.fact_vectors = FactVectors(self.facts, embedder)
        self.facts.attach_vectors(self.fact_vectors)  # recall ranks by meaning too from here
        self.embedder = embedder  # dedup is live from here (candidates lacking a vector are embedded on use)
        vectors = ChunkVectors(self.page_db, self.cache_dir, embedder)
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

    def on_fact_insert(self, fid: int, text: str) -> None:
        """Store a new fact's embedding, for dedup and search, after the call has answered
        (fact_vectors.store_later: reads until then use it all the same; the backfill covers
        facts saved before the model loaded or not yet embedded when the daemon stopped)."""
        if self.fact_vectors is not None:
            self.fact_vectors.store_later(fid, text)

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
        self.page_db.close()
        self.lock.release()
