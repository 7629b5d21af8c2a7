"""The pages store's reads that need the files and the keyword index, and the page write.

A mixin of the pages store (store.py). The store answers search (search.py,
over its own connection to the page tables and the keyword index) and
get_page (the file as it is on disk now) itself; the page write goes to the
writer that keeps the tables and the keyword index in step with the folder
(the VaultIndex, vault_index.py), which answers no read. Until the engine
opens the files (`open_files`, once the index is open) these raise
`PagesNotOpen`. Each takes the viewer it is for, with the same rule the
table reads use (visible.py).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ..vault.slugs import path_to_slug
from ..vault.visibility import Viewer
from ..page_policy.page_types import PageFile, SearchHit, WrittenPage
if TYPE_CHECKING:
    from .keyword import KeywordIndex


class PagesNotOpen(Exception):
    """The vault index is not open yet: nothing that needs the files can be answered."""


class PageWriter(Protocol):
    """What writes a page file and indexes it before returning (the VaultIndex)."""

    def put_page(self, slug: str, content: str, expected_hash: str | None = None, *,
                 viewer: Viewer = ...) -> dict[str, object]: ...


@dataclass(frozen=True)
class OpenFiles:
    vault: Path                     # the folder get_page reads and search checks for staleness
    keyword: "KeywordIndex | None"    # None: a read-only index with nothing built yet
    writer: PageWriter


class FileReads:
    db: sqlite3.Connection
    files: OpenFiles | None = None

    def open_files(self, vault: Path, keyword: "KeywordIndex | None", writer: PageWriter) -> None:
        """From now on search and get_page read `vault` and `keyword`; put_page goes to `writer`."""
        self.files = OpenFiles(vault, keyword, writer)   # one assignment: a reader sees all of it or none

    def _open(self) -> OpenFiles:
        if self.files is None:
            raise PagesNotOpen("the vault index is not open")
        return self.files

    def search(self, query: str, limit: int, viewer: Viewer, *, embedder: object | None = None,
               vectors: object | None = None) -> tuple[list[SearchHit], str | None]:
        """Pages for a query, best first, and why the vectors took no part (None when they did)."""
        from .search import search_pages   # its analyzer loads tantivy: not for the CLI's table lookups

        files = self._open()
        results, degraded = search_pages(self.db, files.keyword, files.vault, query, limit, viewer=viewer,
                                         embedder=embedder, vectors=vectors)
        return cast(list[SearchHit], results), degraded

    def get_page(self, slug: str, viewer: Viewer) -> PageFile | None:
        """The page as it is on disk now; None when missing or private to this viewer.
        PageWriteError (vault_files.py) when it is too large to serve (page_policy/page_file.py)."""
        # the page parser (and yaml) loads on the first get_page, off the start-up of a hook or a CLI lookup
        from ..page_policy.page_file import page_on_disk

        vault = self._open().vault
        slug = (slug or "").strip()
        row = self.db.execute("SELECT slug, path, visibility, updated_at FROM pages WHERE slug = ?",
                              (slug,)).fetchone()
        if row is None and slug:
            row = self.db.execute("SELECT slug, path, visibility, updated_at FROM pages WHERE slug = ?",
                                  (path_to_slug(slug),)).fetchone()
        if row is None or not viewer.may_see(row["visibility"]):
            return None
        return page_on_disk(vault, row["slug"], row["path"], row["updated_at"], viewer)

    def put_page(self, slug: str, content: str, expected_hash: str | None, writer: Viewer) -> WrittenPage:
        """Write a page atomically and index it; a writer who may not see private pages
        never writes over one. PageWriteError names a refusal and its fix."""
        return cast(WrittenPage, self._open().writer.put_page(slug, content, expected_hash, viewer=writer))
