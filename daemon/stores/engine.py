"""The Engine a verb is handed: the stores, the models' state, the clock (docs/architecture.md, "Stores").

A verb sees only this Protocol: what it reads is declared here, read-only, and
nothing a verb does sets an attribute on the engine. It names no backend: the
embedded engine (daemon/server/vault_engine.py, VaultEngine) and a front end's
over a shared store (daemon/server/store_engine.py, StoreEngine) both satisfy
it (tests/engine_conformance.py, checked by tests/test_types.py). The steps
verbs share (page search, dedup's similarity, the model's prefetch) are
functions over it in daemon/verbs/steps.py.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Protocol

from .cursors import CursorStore
from .task_dates import TaskDatesStore
from .facts import FactsStore
from .pages import PagesStore
from .vectors import FactVectorsStore, TextEmbedder, VectorsStore


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


class ModelState(Protocol):
    """The embedding model's loader as status and page search see it
    (indexer/embeddings/model_loader.py)."""

    @property
    def state(self) -> str:
        """idle, loading, ready, failed, or off (indexer/embeddings/search_modes.py)."""
        ...

    def status(self) -> dict[str, Any]:
        """state, error, phase, backend, and what embeds queries, for status and doctor."""
        ...


class IndexState(Protocol):
    """The page index's bookkeeping that status reports: when it last committed, what waits."""

    @property
    def last_sync(self) -> str | None: ...

    @property
    def pending_events(self) -> int: ...


class UsageRecorder(Protocol):
    """Where the dispatcher writes one line per call (daemon/server/usage.py)."""

    def record(self, entry: dict[str, Any]) -> None: ...


class Engine(Protocol):
    """What a verb, and the dispatcher that calls it, may use of the engine."""

    @property
    def vault(self) -> Path:
        """The vault folder, resolved (a front end over a shared store has none: ".")."""
        ...

    @property
    def label(self) -> str:
        """What status names as the vault: its folder, or the store's URL without a password."""
        ...

    @property
    def state_dir(self) -> Path:
        """This vault's state outside the vault (device id, delta's cursors)."""
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
    def task_dates(self) -> TaskDatesStore:
        """When each undated open task was first seen."""
        ...

    @property
    def fact_vectors(self) -> FactVectorsStore | None:
        """Fact vectors for remember's dedup and facts search; None until the model has loaded."""
        ...

    @property
    def index(self) -> IndexState | None:
        """The page index; None until it is open (the page tools answer `unavailable` until then)."""
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
    def embedder(self) -> TextEmbedder | None:
        """The embedding model once loaded."""
        ...

    @property
    def query_embedder(self) -> TextEmbedder | None:
        """What embeds a page search's query; None until the model has loaded."""
        ...

    @property
    def models(self) -> ModelState | None:
        """The model loader's state (loading, ready, failed, off) and error; None before it starts."""
        ...

    @property
    def shared_store(self) -> bool:
        """Other processes answer from the same store (front ends over PostgreSQL): a new fact's
        vector is stored before the call answers, since the next call may reach another one."""
        ...

    @property
    def usage(self) -> UsageRecorder | None:
        """Where each call's usage line goes (`brain usage`); None: not recorded."""
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
