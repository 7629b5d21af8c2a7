"""`brain index --store URL`: the one process that keeps a shared store in step with the vault
(docs/scaling.md, "Who writes what").

It owns three writes:
- pages: the vault's Markdown into the store's page tables (and, with the
  model, their chunk vectors), once in full and then live from saves;
- facts into the vault: every fact a front end saved in the store is written
  to this device's facts log in the vault, with the store's id, so the log
  stays the user's record (`SqliteFactsStore.mirror`);
- facts into the store: facts the vault's logs hold and the store does not (a
  fresh store, `brain rebuild --store`) are put in with the same ids.

The vault's writer lock is held throughout, as `brain index` holds it: a
daemon of this vault and this indexer never write its facts log at once.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

from ..facts.store import SqliteFactsStore
from ...indexer.vault.brain_folder import brain_folder
from ..stores.facts import FactScope, Order
from ...indexer.vault.visibility import Viewer

log = logging.getLogger("brain.store_indexer")

# how often facts saved through the front ends are copied into the vault's log while watching
EXPORT_EVERY_S = 2.0


class StoreIndexer:
    """The vault (pages and facts log) and one shared store, kept in step."""

    def __init__(self, vault: Path, url: str, places: Any, *, writer: str = "index"):
        from ..postgres.open_store import open_indexer_parts
        from ..vault_lock import VaultLock

        self.vault = Path(vault).expanduser().resolve()
        self.places = places
        self.lock = VaultLock(self.vault)
        self.lock.acquire(writer, wait_s=0)  # VaultLocked: a daemon (or another indexer) owns the vault
        try:
            brain_folder(self.vault)  # a real folder inside the vault, or BrainFolderError (architecture.md)
            self.parts = open_indexer_parts(self.vault, url)
            self.log = SqliteFactsStore.for_vault(self.vault / ".brain", places.cache_dir(self.vault) / "facts.sqlite",
                                            places.vault_state_dir(self.vault) / "device")
        except BaseException:
            self.lock.release()
            raise
        self.stop = threading.Event()
        self._watch: Any = None
        self._embedder: Any = None

    # -- pages ---------------------------------------------------------------

    def index_pages(self, progress: Callable[[int, int], None] | None = None) -> dict:
        report: dict = self.parts.pages.reconcile(progress=progress)
        return report

    def load_model(self) -> Any:
        """The embedding model, loaded here, in this process (None when it cannot load)."""
        from ...indexer.embeddings.model_loader import ModelLoader

        if self._embedder is None:
            self._embedder = ModelLoader(cache_root=self.places.cache_root, cancel=self.stop).load()
        return self._embedder

    def embed_chunks(self, progress: Callable[[int, int], None] | None = None) -> dict:
        """Embed the chunks and facts that have no vector yet; then follow the page commits."""
        embedder = self.load_model()
        if embedder is None:
            return {"vectors": 0, "embedded": 0, "model": "not loaded"}
        return self.parts.embed(embedder, progress)

    # -- facts ----------------------------------------------------------------

    def facts_into_store(self) -> int:
        """Put into the store every fact of the vault's logs it lacks, with the same id; how many."""
        facts = self.log.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)
        adopted: int = self.parts.adopt(facts)
        return adopted

    def facts_into_vault(self) -> int:
        """Write into the vault's log what the store holds and the log does not; records written."""
        changed = self.parts.changed_facts()
        written = self.log.mirror(changed) if changed else 0
        if written:
            log.info("wrote %d facts records from the store into the vault's log", written)
        return written

    # -- watching ---------------------------------------------------------------

    def watch(self) -> Any:
        """Follow saves into the store; copy new facts into the vault until `stop` is set."""
        self._watch = self.parts.pages.start_watching()
        return self._watch

    def run_until_stopped(self) -> None:
        while not self.stop.wait(EXPORT_EVERY_S):
            try:
                self.facts_into_vault()
                if self.log.catch_up():   # another device's log grew (a sync tool copied it in)
                    self.facts_into_store()
            except Exception:  # the next round tries again; the store and the logs keep the facts meanwhile
                log.exception("could not bring the store's facts and the vault's logs in step")

    def close(self) -> None:
        self.stop.set()
        try:
            self.parts.close()
            self.log.close()
        finally:
            self.lock.release()

