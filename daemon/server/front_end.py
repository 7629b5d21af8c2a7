"""`brain serve --http --store URL`: a front end serving the verbs over a shared store,
in this process (docs/scaling.md, "A team brain on PostgreSQL").

Without `--store`, `brain serve --http` forwards every call to this vault's
daemon. With it, the calls run here, on an engine over the store
(daemon/server/store_engine.py), and the bearer tokens are the store's, so
every front end of one store accepts the same tokens.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..protocol.caller import Caller
from ..stores.auth import AuthStore

if TYPE_CHECKING:
    from .store_engine import StoreEngine

log = logging.getLogger("brain.front_end")


class FrontEnd:
    """One front end: its engine, its call function for the HTTP app, and the store's tokens."""

    def __init__(self, engine: StoreEngine, auth: AuthStore, label: str):
        from .mcp import engine_dispatcher

        self.engine = engine
        self.auth = auth
        self.label = label
        self._dispatch = engine_dispatcher(engine)

    async def call(self, name: str, arguments: Any, caller: Caller) -> tuple[dict, bool]:
        import anyio

        answer: tuple[dict, bool] = await anyio.to_thread.run_sync(self._dispatch, name, arguments, caller)
        return answer

    def close(self) -> None:
        self.engine.close()


def open_front_end(places: Any, cfg: dict, url: str, *, vault: Path | None = None,
                   load_model: bool = True) -> FrontEnd:
    """Connect to the store (applying its migrations), build the engine, and start loading the model
    in the background: the front end answers keyword-only until it is ready. `vault`: the vault's
    folder when this host has it, so that put_page can write its file (elsewhere put_page is refused).
    Raises StoreUnavailable (its message names the fix) when the store cannot be reached."""
    from ..postgres.open_store import open_store
    from .store_engine import StoreEngine, store_label

    llm = None
    try:
        from ..llm.providers import provider_from_config

        llm = provider_from_config(cfg, os.environ)  # an entry point: it reads API keys from its environment
    except Exception:
        log.warning("no LLM provider: synthesize will answer `unavailable`", exc_info=True)
    parts = open_store(url, vault=vault)
    label = store_label(url)
    engine = StoreEngine(places, cfg, label=label, facts=parts.facts, pages=parts.pages, cursors=parts.cursors,
                         chunk_vectors=parts.chunk_vectors, fact_shelf=parts.fact_shelf, llm=llm,
                         closers=(parts.close,))
    if load_model:
        engine.load_models(background=True)
    return FrontEnd(engine, parts.auth, label)
