"""One PostgreSQL store, opened for a front end, for the indexer or for `brain auth`
(docs/scaling.md, "A team brain on PostgreSQL").

Nothing here is imported until a store URL is given: the default install has
no psycopg. `StoreUnavailable` carries what went wrong and the fix, for the
CLI to print (cli/store_errors.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


class StoreUnavailable(RuntimeError):
    """The store cannot be used: unreachable, refused, or without pgvector. `fix` says what to do."""

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.fix = fix


def _label(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}{parts.path}"


def check(url: str) -> None:
    """Connect once and apply the pending migrations; StoreUnavailable says why not, with the fix."""
    import psycopg

    from . import schema

    try:
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            schema.migrate(conn)
    except psycopg.OperationalError as e:
        first = (str(e).strip().splitlines() or ["no answer"])[-1]
        raise StoreUnavailable(f"cannot reach the store at {_label(url)}: {first}",
                               "start PostgreSQL there, or correct the URL (`--store`, or "
                               "`brain config set store postgresql://USER@HOST/DB`); keep the "
                               "password in ~/.pgpass, not in the URL") from None
    except psycopg.errors.FeatureNotSupported as e:
        raise StoreUnavailable(f"the store at {_label(url)} has no pgvector: {e}",
                               "install the pgvector extension on that server (its package is named "
                               "postgresql-NN-pgvector on Debian and Ubuntu)") from None
    except psycopg.errors.UndefinedFile as e:
        raise StoreUnavailable(f"the store at {_label(url)} has no pgvector: {e}",
                               "install the pgvector extension on that server") from None
    except psycopg.errors.InsufficientPrivilege as e:
        raise StoreUnavailable(f"the store at {_label(url)} refused to make brain's tables: {e}",
                               "connect as the database's owner once (it runs the migrations), or ask its "
                               "administrator to `CREATE EXTENSION vector` there") from None


@dataclass
class StoreParts:
    """What a front end serves from: every contract's PostgreSQL implementation."""

    facts: Any
    pages: Any
    cursors: Any
    auth: Any
    chunk_vectors: Callable[[Any], Any]
    fact_shelf: Any
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in self.closers:
            try:
                close()
            except Exception:
                pass


def open_store(url: str) -> StoreParts:
    """The stores of one database, for a front end (no vault on this host)."""
    check(url)
    from .auth_store import PgAuthStore
    from .chunk_vectors import PgChunkVectors
    from .connections import Connections
    from .cursor_store import PgCursorStore
    from .facts_store import PgFactsStore
    from .pages_store import PgPagesStore

    conns = Connections(url)
    facts = PgFactsStore(url, connections=conns)
    pages = PgPagesStore(url)
    return StoreParts(facts=facts, pages=pages, cursors=PgCursorStore(url), auth=PgAuthStore(url),
                      chunk_vectors=lambda embedder: PgChunkVectors(url, embedder), fact_shelf=facts,
                      closers=[conns.close])


def open_auth(url: str) -> Any:
    """The store's tokens, which every front end of it accepts (`brain auth token … --store`)."""
    check(url)
    from .auth_store import PgAuthStore

    return PgAuthStore(url)


class IndexerParts:
    """What the one indexer writes: the page tables from the vault, the chunk vectors, and the facts."""

    def __init__(self, vault: Path, url: str):
        check(url)
        from .facts_store import PgFactsStore
        from .indexer import PgVaultIndexer

        self.url = url
        self.vault = vault
        self.pages = PgVaultIndexer(vault, url)
        self.facts = PgFactsStore(url)
        self.facts_seen_ended: str | None = None

    def reset(self) -> None:
        """Empty the store's pages and facts, for `brain rebuild --store` (the vault and its logs stay)."""
        self.pages.reset()
        self.facts.reset()

    def embed_chunks(self, progress: Callable[[int, int], None] | None = None) -> dict:
        from ...indexer.embeddings.model_loader import load_minilm  # type: ignore[import-not-found]
        from .chunk_vectors import PgChunkVectors

        raise NotImplementedError

    def close(self) -> None:
        for close in (self.pages.close, self.facts.close):
            try:
                close()
            except Exception:
                pass


def open_indexer_parts(vault: Path, url: str) -> IndexerParts:
    return IndexerParts(vault, url)
