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
    except schema.SchemaTooNew as e:
        raise StoreUnavailable(str(e), "upgrade brain on this host to the version that migrated the "
                                       "store (the indexer's), then run the command again") from None
    except psycopg.OperationalError as e:
        # libpq's reason is its first line ("… failed: Connection refused"); the rest is advice
        why = (str(e).strip().splitlines() or ["no answer"])[0].removeprefix("connection failed: ").strip()
        raise StoreUnavailable(f"cannot reach the store at {_label(url)}: {why}",
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


def open_store(url: str, *, vault: Path | None = None) -> StoreParts:
    """The stores of one database, for a front end; `vault` when this host has the vault's
    folder (put_page writes there; without it put_page is refused)."""
    check(url)
    from .auth_store import PgAuthStore
    from .chunk_vectors import PgChunkVectors
    from .cursors_store import PgCursorStore
    from .facts_store import PgFactsStore
    from .pages_store import PgPagesStore

    facts = PgFactsStore(url)
    pages = PgPagesStore(url, vault)
    cursors = PgCursorStore(url)
    auth = PgAuthStore(url)

    def chunk_vectors(embedder: Any) -> PgChunkVectors:
        # a front end only queries: the indexer embeds (passing no model keeps this one from building)
        return PgChunkVectors(url, None, model_id=embedder.model_id)

    return StoreParts(facts=facts, pages=pages, cursors=cursors, auth=auth, chunk_vectors=chunk_vectors,
                      fact_shelf=facts, closers=[auth.close])


def open_auth(url: str) -> Any:
    """The store's tokens, which every front end of it accepts (`brain auth token … --store`)."""
    check(url)
    from .auth_store import PgAuthStore

    return PgAuthStore(url)


# what `brain rebuild --store` empties of the pages: the indexer fills them again from the vault
_PAGE_TABLES = "pages, aliases, links, timeline, chunks, problems, index_meta"


class IndexerParts:
    """What the one indexer writes: the page tables from the vault, their chunk vectors, the facts."""

    def __init__(self, vault: Path, url: str):
        check(url)
        from .facts_store import PgFactsStore
        from .indexer import PgVaultIndexer

        self.url = url
        self.vault = vault
        self.pages = PgVaultIndexer(vault, url)
        self.facts = PgFactsStore(url)
        self.vectors: Any = None
        self.facts_position = 0   # where facts_since has been read to (export is idempotent: 0 is safe)

    def reset(self) -> None:
        """Empty the store's pages and facts, for `brain rebuild --store` (the vault and its logs stay)."""
        from .facts_adopt import reset

        with self.pages.conn.transaction():
            self.pages.conn.execute(f"TRUNCATE {_PAGE_TABLES} CASCADE")
        reset(self.facts)
        self.facts_position = 0

    def adopt(self, facts: Any) -> int:
        from .facts_adopt import adopt

        return adopt(self.facts, facts)

    def changed_facts(self) -> list[Any]:
        """Every fact written or expired in the store since the last call, private ones included."""
        out: list[Any] = []
        while True:
            batch = self.facts.facts_since(self.facts_position)
            if not batch:
                return out
            self.facts_position = batch[-1][0]
            out.extend(f for _, f in batch)

    def embed(self, embedder: Any, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Give every chunk (and every fact) without a vector of this model one, then keep doing so
        for the chunks each later commit adds."""
        from ...indexer.embeddings.fact_vectors import FactVectors
        from ..stores.facts import FactScope, Order
        from ...indexer.vault.visibility import Viewer
        from .chunk_vectors import PgChunkVectors

        if self.vectors is None:
            self.vectors = PgChunkVectors(self.url, embedder)
            self.pages.on_chunks_changed.append(self.vectors.on_chunks_changed)
        self.vectors.build(progress)
        self.vectors.start()
        fact_vectors = FactVectors(self.facts, embedder)
        try:
            facts = fact_vectors.backfill(self.facts.listed(FactScope(order=Order.ID_DESC), Viewer.owner(), None))
            fact_vectors.wait_written()
        finally:
            fact_vectors.close()
        stats = dict(self.vectors.stats())
        return {"vectors": stats.get("vectors", 0), "embedded": self.vectors.embedded, "fact_vectors": facts}

    def close(self) -> None:
        for close in (getattr(self.vectors, "close", None), self.pages.close, self.facts.close):
            if close is None:
                continue
            try:
                close()
            except Exception:
                pass


def open_indexer_parts(vault: Path, url: str) -> IndexerParts:
    return IndexerParts(vault, url)
