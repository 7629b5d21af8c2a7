"""The engine: one vault's facts store, page tables, indexes and models.

Verbs receive an Engine and a Caller; they never read config or environment.
The engine is built by an entry point (the daemon, or the CLI with
--no-daemon) from a Places and a config dict.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..indexer.db import open_db
from . import config as config_mod
from .entity_slugs import canonical_entity_slug
from .facts_store import FactsStore
from .places import Places
from .protocol import Caller, now_iso
from .usage import UsageLog
from .vault_lock import VaultLock

log = logging.getLogger("brain.engine")

DEGRADED_NO_EMBEDDINGS = "keyword_only_no_embedding_provider"


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
        (self.vault / ".brain").mkdir(parents=True, exist_ok=True)
        self.facts = FactsStore(self.vault / ".brain" / "facts.jsonl", self.cache_dir / "facts.sqlite")
        self.page_db = open_db(self.cache_dir / "index.sqlite")
        self.usage = UsageLog(places.usage_file)
        # attached by the indexer / daemon when available
        self.index = None        # indexer's VaultIndex: keyword search, sync, page writes
        self.embedder = None     # indexer's Embedder once the model has loaded
        self.vectors = None      # indexer's vector search over chunks
        self.llm = None          # synthesize's provider

    def setting(self, key: str):
        return config_mod.get(self.cfg, key)

    # -- shared pieces the verbs use ----------------------------------------

    def canonical_entity(self, name: str, caller: Caller) -> str:
        return canonical_entity_slug(name, self.page_db, remote=caller.remote)

    def search_pages(self, query: str, limit: int, caller: Caller) -> tuple[list[dict], str | None]:
        """Page hits for recall's query arm and the reason the search was degraded, if it was."""
        if self.index is None:
            return [], DEGRADED_NO_EMBEDDINGS
        return self.index.search(query, limit, remote=caller.remote, embedder=self.embedder, vectors=self.vectors)

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

    def similar_fact(self, entity_slug: str, text: str):
        """(row, cosine) of the most similar active fact about the entity, or None."""
        if self.embedder is None or not hasattr(self, "fact_similarity"):
            return None
        return self.fact_similarity(entity_slug, text)  # type: ignore[attr-defined]

    def after_fact_insert(self, fid: int, text: str) -> None:
        """Hook for the vector layer to store the fact's embedding."""
        hook = getattr(self, "on_fact_insert", None)
        if hook is not None:
            try:
                hook(fid, text)
            except Exception:
                log.warning("could not embed fact #%d", fid, exc_info=True)

    def close(self) -> None:
        if self.index is not None and hasattr(self.index, "close"):
            self.index.close()
        self.facts.close()
        self.page_db.close()
        self.lock.release()
