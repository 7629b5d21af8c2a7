"""The pages store's reads and writes that need the files and the keyword index.

A mixin of the pages store (store.py): search, the page as it is on disk and
the page write go through the VaultIndex once one is attached (the engine
attaches it when it opens the index); before that they raise `PagesNotOpen`.
Each takes the viewer it is for, which the VaultIndex applies (search.py,
page_tools.py) with the same rule the table reads use (visible.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..vault.visibility import Viewer
from ..page_policy.page_types import PageFile, SearchHit, WrittenPage

if TYPE_CHECKING:
    from .vault_index import VaultIndex


class PagesNotOpen(Exception):
    """The vault index is not open yet: nothing that needs the files can be answered."""


class FileReads:
    index: "VaultIndex | None" = None

    def attach(self, index: "VaultIndex") -> None:
        self.index = index

    def _open(self) -> "VaultIndex":
        if self.index is None:
            raise PagesNotOpen("the vault index is not open")
        return self.index

    def search(self, query: str, limit: int, viewer: Viewer, *, embedder: object | None = None,
               vectors: object | None = None) -> tuple[list[SearchHit], str | None]:
        """Pages for a query, best first, and why the vectors took no part (None when they did)."""
        results, degraded = self._open().search(query, limit, viewer=viewer, embedder=embedder, vectors=vectors)
        return cast(list[SearchHit], results), degraded

    def get_page(self, slug: str, viewer: Viewer) -> PageFile | None:
        """The page as it is on disk now; None when missing or private to this viewer.
        PageWriteError (vault_files.py) when it is too large to serve."""
        return cast("PageFile | None", self._open().get_page(slug, viewer=viewer))

    def put_page(self, slug: str, content: str, expected_hash: str | None, writer: Viewer) -> WrittenPage:
        """Write a page atomically and index it; a writer who may not see private pages
        never writes over one. PageWriteError names a refusal and its fix."""
        return cast(WrittenPage, self._open().put_page(slug, content, expected_hash, viewer=writer))
