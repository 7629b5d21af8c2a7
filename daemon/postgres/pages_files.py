"""The PostgreSQL pages store's search, page files and page writes.

A mixin of the PostgreSQL pages store (pages_store.py). Search is
page_search.py's (keyword over the weighted tsvectors, nearest chunks and
page cards by HNSW, fused as the embedded search fuses them: SEARCH_FUSION). The page
files are the vault's: `get_page` reads the file as it is on disk now, and
`put_page` runs the embedded store's own checks and atomic write
(indexer/vault/page_writes.py: the hash check, the private page a blind
writer never writes over, the symlink rules) and then indexes the file
through the vault indexer (indexer.py), so the vault stays the source of
truth and the row follows it. Without a vault these answer `Unavailable`, naming the fix.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...indexer.embeddings.search_modes import KEYWORD_ONLY
from ...indexer.page_policy.page_file import page_on_disk
from ...indexer.page_policy.page_types import PageFile, SearchHit, WrittenPage
from ...indexer.vault.page_writes import content_bytes, prepare_write, write_if_unchanged
from ...indexer.vault.scan import IgnoreRules, stat_page
from ...indexer.vault.slugs import path_to_slug
from ...indexer.vault.vault_files import PageWriteError, check_slug, content_hash
from ...indexer.vault.visibility import Viewer
from ..protocol.errors import Unavailable
from . import page_search

if TYPE_CHECKING:
    import psycopg

    from .indexer import PgVaultIndexer

log = logging.getLogger("brain.pages.postgres")
# how the keyword and vector lists are fused: the embedded search's fusion with page cards ranked
# best on the tuning sets (sample_brain questions and npm-tune; docs/scaling.md, "PostgreSQL (in progress)")
SEARCH_FUSION = "cards"


class PgFileReads:
    dsn: str
    vault: Path | None
    db: "psycopg.Connection"
    _writer: "PgVaultIndexer | None" = None
    _write_lock: threading.Lock      # one put_page at a time in this process (the indexer locks across them)
    _search_lock: threading.Lock     # a search's transaction (SET LOCAL for HNSW) on the shared connection

    def _rows(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _vault(self) -> Path:
        if self.vault is None:
            # a front end on a host without the vault (docs/scaling.md): a clear answer, not a crash
            raise Unavailable("this front end has no vault folder, so it cannot read or write page files.",
                              "Call get_page and put_page through a front end started on the vault's host "
                              "(`brain serve --http --store URL` there), or edit the vault itself.")
        return self.vault

    # -- search --------------------------------------------------------------------

    def search(self, query: str, limit: int, viewer: Viewer, *, embedder: object | None = None,
               vectors: object | None = None) -> tuple[list[SearchHit], str | None]:
        """Pages for a query, best first, and why the vectors took no part (None when they did)."""
        q = " ".join((query or "").replace("\x00", " ").split())   # PostgreSQL text holds no NUL
        use_vectors = embedder is not None and vectors is not None and bool(getattr(vectors, "ready", False))
        degraded = None if use_vectors else KEYWORD_ONLY
        qv = None
        if use_vectors and q:
            try:
                qv = [float(x) for x in cast(Any, embedder).embed([q])[0]]
            except Exception:   # a failed embedding degrades the search, never fails it
                log.warning("embedding the query failed; answering from keywords", exc_info=True)
                degraded = KEYWORD_ONLY
        with self._search_lock:
            hits = page_search.search(self.db, q, qv, viewer, limit, mode="hybrid" if qv is not None else "keyword",
                                      fusion=SEARCH_FUSION)
        stale = self._stale([h["slug"] for h in hits])
        return [cast(SearchHit, {**h, "stale": stale.get(h["slug"], False)}) for h in hits], degraded

    def _stale(self, slugs: list[str]) -> dict[str, bool]:
        """slug → whether its file changed on disk since it was indexed (unknown without the vault: no)."""
        if self.vault is None or not slugs:
            return {}
        out = {}
        for slug, path, mtime_ns, size in self._rows("SELECT slug, path, mtime_ns, size FROM pages "
                                                     "WHERE slug = ANY(%s)", (slugs,)):
            st = stat_page(self.vault, path)
            out[slug] = st is None or st.mtime_ns != mtime_ns or st.size != size
        return out

    # -- the page files -------------------------------------------------------------

    def get_page(self, slug: str, viewer: Viewer) -> PageFile | None:
        """The page as it is on disk now (None: missing, or private to this viewer)."""
        vault = self._vault()
        slug = (slug or "").strip()
        row = None
        for key in dict.fromkeys([slug, path_to_slug(slug)] if slug else []):
            found = self._rows("SELECT slug, path, visibility, updated_at FROM pages WHERE slug = %s", (key,))
            if found:
                row = found[0]
                break
        if row is None or not viewer.may_see(row[2]):
            return None
        return page_on_disk(vault, row[0], row[1], row[3], viewer)

    def put_page(self, slug: str, content: str, expected_hash: str | None, writer: Viewer) -> WrittenPage:
        """Write the page file atomically, then index it; a writer who may not see private pages
        never writes over one (what it sent is kept aside, docs/protocol.md §4.8)."""
        vault = self._vault()
        check_slug(slug)
        data = content_bytes(content)
        with self._write_lock:
            found = self._rows("SELECT path, visibility FROM pages WHERE slug = %s", (slug,))
            indexer = self._indexer()
            ready = prepare_write(vault, indexer.rules, slug, (found[0][0], found[0][1]) if found else None, data,
                                  expected_hash, writer)
            if isinstance(ready, dict):
                return cast(WrittenPage, ready)
            rel, real, old = ready
            held = write_if_unchanged(vault, slug, rel, data, old, writer)
            if held is not None:   # changed meanwhile into a page private to the writer
                return cast(WrittenPage, held)
            target = Path(real).relative_to(vault.resolve()).as_posix()   # a link's target may be a page too
            indexer.apply(paths=list(dict.fromkeys([rel, target])))
            indexed = self._rows("SELECT slug FROM pages WHERE path = %s", (rel,))
            if not indexed:
                why = self._rows("SELECT detail FROM problems WHERE path = %s LIMIT 1", (rel,))
                raise PageWriteError("not_indexed", f"{rel} was written but could not be indexed: "
                                                    f"{why[0][0] if why else 'unknown reason'}.",
                                     "Run `brain doctor` for details.")
        return WrittenPage(slug=indexed[0][0], path=rel, hash=content_hash(data), created=old is None)

    def _indexer(self) -> "PgVaultIndexer":
        """The vault indexer this store's writes go through (its own connection, opened on first write)."""
        if self._writer is None:
            from .indexer import PgVaultIndexer

            self._writer = PgVaultIndexer(self._vault(), self.dsn, migrate=False)
        else:
            self._writer.rules = IgnoreRules.load(self._vault())
        return self._writer

    def close_files(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
