"""The engine: one vault's facts store, page tables, indexes and models.

Verbs receive an Engine and a Caller; they never read config or environment.
The engine is built by an entry point (the daemon, or the CLI with
--no-daemon) from a Places and a config dict.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ...indexer.vault.brain_folder import brain_folder
from ...indexer.pages.db import open_db
from ...indexer.embeddings import search_modes as why
from .. import config as config_mod
from ..verbs.entity_slugs import canonical_entity_slug
from ..facts.store import FactsStore
from ..places import Places
from ...indexer.vault.timestamps import now_iso
from ..protocol.caller import Caller
from .usage import UsageLog
from ..vault_lock import VaultLock

log = logging.getLogger("brain.engine")


class Engine:
    def __init__(self, vault: Path, places: Places, cfg: dict | None = None, *, writer: str | None = None,
                 lock_wait_s: float = 5.0):
        self.vault = Path(vault).expanduser().resolve()
        self.places = places
        self.cfg = dict(cfg or {})
        self.cache_dir = places.cache_dir(self.vault)
        self.state_dir = places.vault_state_dir(self.vault)
        self.lock = VaultLock(self.vault)
        if writer:
            self.lock.acquire(writer, wait_s=lock_wait_s)
        brain_folder(self.vault)   # a real folder inside the vault, or BrainFolderError
        # every device writes its own log under .brain/facts/; its id lives here, outside the vault
        # (docs/architecture.md, "Two devices, one vault")
        self.facts = FactsStore.for_vault(self.vault / ".brain", self.cache_dir / "facts.sqlite",
                                          self.state_dir / "device")
        self.page_db = open_db(self.cache_dir / "index.sqlite")
        self.usage = UsageLog(places.usage_file)
        # attached by the indexer / daemon when available
        self.index = None        # indexer's VaultIndex: keyword search, sync, page writes
        self.index_ready = False  # the index has been reconciled with the folder once
        self.index_progress = None  # (files done, files to look at) while that first reconcile runs
        self.embedder = None     # indexer's Embedder once the model has loaded
        self.vectors = None      # indexer's vector search over chunks
        self.fact_vectors = None  # fact embeddings for remember's dedup, once the model has loaded
        self.models = None       # the model loader: state loading/ready/failed/off + error
        self.llm = None          # synthesize's provider
        self.stopping = threading.Event()  # set when closing begins: a model export in progress ends
        self._closed = False

    def setting(self, key: str):
        return config_mod.get(self.cfg, key)

    # -- shared pieces the verbs use ----------------------------------------

    def canonical_entity(self, name: str, caller: Caller) -> str:
        return canonical_entity_slug(name, self.page_db, remote=caller.remote)

    def search_pages(self, query: str, limit: int, caller: Caller,
                     keyword_only: bool = False) -> tuple[list[dict], str | None]:
        """Page hits for recall's query arm and, when the vectors took no part, why
        (a cause named in indexer/embeddings/search_modes.py); None when they did. `keyword_only`:
        leave the vectors out (an entity miss's near misses, docs/protocol.md §3.3)."""
        if self.index is None:
            return [], why.INDEX_NOT_OPEN
        if keyword_only:
            return self.index.search(query, limit, remote=caller.remote, embedder=None, vectors=None)
        cause = self.vectors_missing_cause()
        embedder = self.fact_vectors.query_embedder() if self.fact_vectors is not None else self.embedder
        results, degraded = self.index.search(query, limit, remote=caller.remote, embedder=embedder,
                                              vectors=self.vectors)
        if degraded is None:
            return results, None
        return results, cause or why.VECTOR_SEARCH_FAILED

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

    def search_facts(self, query: str, where: list[str], params: list, limit: int, *,
                     active_only: bool, world_only: bool) -> list:
        """Facts in scope ranked by relevance to `query` (keyword BM25, fused with the fact
        vectors once the model has loaded)."""
        from ..facts.search import rank_facts

        return rank_facts(self.facts, self.fact_vectors, query, where, params, limit,
                          active_only=active_only, world_only=world_only)

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
            if self.vectors is not None and hasattr(self.vectors, "on_chunks_changed"):
                index.on_chunks_changed.append(self.vectors.on_chunks_changed)
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

    def note_retrieved(self, slugs: list[str]) -> None:
        """Bump last_retrieved_at for pages a search returned (feeds entity tie-breaks)."""
        if not slugs:
            return
        try:
            self.page_db.executemany(
                "UPDATE pages SET last_retrieved_at = ? WHERE slug = ?", [(now_iso(), s) for s in slugs]
            )
        except Exception:  # a read must not fail over a bookkeeping write
            log.debug("could not bump last_retrieved_at", exc_info=True)

    def dedup_degraded(self) -> bool:
        return self.embedder is None


    # -- embedding model and vectors (indexer/embeddings/model_loader.py, vectors.py, fact_vectors.py) --

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

        self.fact_vectors = FactVectors(self.facts.db, self.facts.lock, embedder)
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
        self.fact_vectors.backfill(self.facts.query([], [], "id DESC", None))
        self.fact_vectors.load()  # the search matrix, so the first recall does not pay for it

    def fact_similarity(self, entity_slug: str, text: str, world_only: bool, worth_comparing=None):
        """(row, cosine) of the nearest of the entity's 5 newest active facts (§3.2), or None
        without a model. `world_only` for remote callers: they are never matched
        against (and so never learn of, or supersede) a private fact. `worth_comparing(rows)`
        False: the caller's answer cannot depend on the cosines, so nothing is embedded (None)."""
        if self.fact_vectors is None:
            return None
        rows = self.facts.active_for_entity(entity_slug, world_only=world_only, limit=5)
        if worth_comparing is not None and not worth_comparing(rows):
            return None
        return self.fact_vectors.nearest(rows, text)

    def prefetch_embedding(self, text: str) -> None:
        """Start embedding the one text a call will need (a fact to dedup, a query, a name that
        missed) on another thread, so the model runs while the call does its keyword work.
        Nothing happens without the model."""
        fact_vectors = self.fact_vectors
        if fact_vectors is not None and text:
            fact_vectors.prefetch(text)

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
        self.page_db.close()
        self.lock.release()
