"""The Engine a verb is handed: the stores, the models and the clocks (docs/architecture.md, "Stores").

A verb sees only this Protocol: what it reads is declared here, read-only, and
nothing a verb does sets an attribute on the engine. The daemon's engine
(daemon/server/vault_engine.py) is the implementation; the entry points build it
(the daemon, the CLI with --no-daemon) and hand it down.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..protocol.caller import Caller
from ...indexer.vault.visibility import Viewer
from .cursors import CursorStore
from .facts import Fact, FactsStore
from .pages import PagesStore
from .vectors import VectorsStore

if TYPE_CHECKING:  # names only: importing these loads numpy and tantivy, never on the CLI's hot path
    from ...indexer.embeddings.embedder import Embedder
    from ...indexer.embeddings.fact_vectors import FactVectors
    from ...indexer.embeddings.model_loader import ModelLoader
    from ...indexer.pages.vault_index import VaultIndex


class Clock(Protocol):
    """The wall clock a verb reads, so that "now" is one thing the engine owns."""

    def now(self) -> _dt.datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class ChatModel(Protocol):
    """synthesize's LLM (daemon/llm/providers.py): a configured provider, or a stand-in
    whose `configured` is False and whose `code` and `detail` say what is missing."""

    @property
    def configured(self) -> bool: ...


class Engine(Protocol):
    """What a verb may use. The daemon's engine (daemon/server/vault_engine.py) is the implementation."""

    @property
    def vault(self) -> Path:
        """The vault folder, resolved."""
        ...

    @property
    def state_dir(self) -> Path:
        """This vault's state outside the vault (device id, delta's cursors)."""
        ...

    @property
    def page_db(self) -> sqlite3.Connection:
        """The page tables, until every read of them goes through `pages`."""
        ...

    @property
    def facts(self) -> FactsStore: ...

    @property
    def pages(self) -> PagesStore: ...

    @property
    def vectors(self) -> VectorsStore | None:
        """Chunk vectors; None until the model has loaded."""
        ...

    @property
    def cursors(self) -> CursorStore:
        """delta's per-caller cursors."""
        ...

    @property
    def fact_vectors(self) -> FactVectors | None:
        """Fact vectors for remember's dedup and facts search; None until the model has loaded."""
        ...

    @property
    def index(self) -> VaultIndex | None:
        """Keyword search, sync and page writes; None until the index is open."""
        ...

    @property
    def index_ready(self) -> bool:
        """The index has been reconciled with the folder once."""
        ...

    @property
    def index_progress(self) -> tuple[int, int] | None:
        """(files looked at, files in the folder) while that first reconcile runs."""
        ...

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model once loaded."""
        ...

    @property
    def models(self) -> ModelLoader | None:
        """The model loader: its state (loading, ready, failed, off) and error."""
        ...

    @property
    def llm(self) -> ChatModel | None:
        """synthesize's provider; None when none was built."""
        ...

    @property
    def clock(self) -> Clock: ...

    def setting(self, key: str) -> Any:
        """The value of a setting (daemon/config.py names them and their defaults)."""
        ...

    def canonical_entity(self, name: str, caller: Caller) -> str:
        """The slug facts about `name` are filed under, as `caller` may see the pages."""
        ...

    def search_pages(self, query: str, limit: int, caller: Caller,
                     keyword_only: bool = False) -> tuple[list[dict[str, Any]], str | None]:
        """Page hits and, when the vectors took no part, why (indexer/embeddings/search_modes.py)."""
        ...

    def note_retrieved(self, slugs: list[str]) -> None:
        """Record that a search returned these pages (entity tie-breaks read it)."""
        ...

    def prefetch_embedding(self, text: str, query: bool = False) -> None:
        """Start embedding the one text a call will need, while the call does its keyword work;
        `query`: a search query (by the query model, when there is one)."""
        ...

    def dedup_degraded(self) -> bool:
        """True while remember's dedup cannot compare meanings (no model yet)."""
        ...

    def fact_similarity(self, entity_slug: str, text: str, viewer: Viewer,
                        worth_comparing: Callable[[list[Fact]], bool] | None = None) -> tuple[Fact, float] | None:
        """(fact, cosine) of the nearest of the entity's newest active facts the viewer may see;
        None without a model."""
        ...

    def on_fact_insert(self, fid: int, text: str) -> None:
        """Store a new fact's embedding, for dedup and search."""
        ...
