"""The pages store contract: pages, chunks, links, aliases, timeline and tags (docs/architecture.md, "Stores").

Every read takes the `Viewer` it is for and leaves out whatever that viewer
may not see: a private page neither resolves, nor counts, nor appears as a
link's other end, a listed page, a changed page or a name. The embedded
implementation is `brain.indexer.pages.store.SqlitePagesStore`; its
search and page files need the vault index open and raise
`brain.indexer.pages.store_files.PagesNotOpen` before it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ...indexer.page_policy.page_types import (Backlink, ChangedPage, Chunk, LinkedTask, ListedPage, PageCounts,
                                          PageDating, PageFile, PageHead, PageLinks, PageName, PageRef, SearchHit,
                                          TimelineEntry, WrittenPage)
from ...indexer.vault.visibility import Viewer

__all__ = ["PagesStore", "Backlink", "ChangedPage", "Chunk", "LinkedTask", "ListedPage", "PageCounts", "PageDating",
           "PageFile", "PageHead", "PageLinks", "PageName", "PageRef", "SearchHit", "TimelineEntry", "Viewer",
           "WrittenPage"]


@runtime_checkable
class PagesStore(Protocol):
    """What verbs and the CLI may ask of pages, chunks, links, aliases, timeline and tags."""

    # -- names to pages (docs/protocol.md §3.3, §4.4) ---------------------------

    def resolve_name(self, name: str, viewer: Viewer) -> list[PageHead]:
        """Candidate pages for an entity name, best first (alias, exact title or slug, slug
        suffix, a first name's people/companies pages; freshest first within a rank)."""
        ...

    def resolve_alias(self, name: str, viewer: Viewer) -> list[str]:
        """Slugs of at most two pages declaring `name` an alias (two: it is ambiguous)."""
        ...

    def resolve_entity(self, name: str, viewer: Viewer) -> str | None:
        """The one existing page an entity name means, or None (remember/recall then slugify)."""
        ...

    def visible_slugs(self, slugs: list[str], viewer: Viewer) -> list[str]:
        """`slugs`, in order, without the pages the viewer may not see."""
        ...

    # -- one page -------------------------------------------------------------------

    def page(self, slug: str, viewer: Viewer) -> PageHead | None: ...

    def aliases(self, slug: str, viewer: Viewer) -> list[str]:
        """Each alias as the page writes it."""
        ...

    def tags(self, slug: str, viewer: Viewer) -> list[str]: ...

    def timeline(self, slug: str, viewer: Viewer, limit: int) -> list[TimelineEntry]:
        """The newest `limit` timeline entries, newest first."""
        ...

    def chunks(self, slug: str, viewer: Viewer) -> list[Chunk]:
        """The page's indexed text, cut at headings, in page order."""
        ...

    def links(self, slug: str, viewer: Viewer) -> PageLinks:
        """Resolved typed links out of and into the page (bare-name mentions left out)."""
        ...

    def backlink_count(self, slug: str, viewer: Viewer) -> int: ...

    def backlinks(self, slug: str, viewer: Viewer) -> list[Backlink] | None:
        """Every link into the page (None: no such page for this viewer)."""
        ...

    def linked_tasks(self, slug: str, viewer: Viewer, limit: int) -> list[LinkedTask]:
        """Open tasks on other pages that link the page (`- [ ] send [[Priya Raman]] the contract`
        in a daily note), by their due date else their page's last change, newest first; a task
        on a page the viewer may not see is left out."""
        ...

    # -- many pages -----------------------------------------------------------------

    def list_pages(self, prefix: str | None, limit: int, viewer: Viewer) -> list[ListedPage]:
        """Pages under a slug prefix, most recently updated first."""
        ...

    def dating(self, slugs: list[str], viewer: Viewer) -> dict[str, PageDating]:
        """What dates each of these pages (frontmatter date, timeline dates, last change)."""
        ...

    def pages_changed_since(self, since: str, after_slug: str | None, until: str, viewer: Viewer,
                            limit: int) -> list[ChangedPage]:
        """Pages after the (since, after_slug) keyset up to `until`, oldest first
        (after_slug None: strictly after `since`)."""
        ...

    def count_pages(self, viewer: Viewer) -> PageCounts: ...

    # -- the files and the keyword index (until the index is open: PagesNotOpen) ------

    def search(self, query: str, limit: int, viewer: Viewer, *, embedder: object | None = None,
               vectors: object | None = None) -> tuple[list[SearchHit], str | None]:
        """Pages for a query, best first, and why the vectors took no part (None when they did)."""
        ...

    def get_page(self, slug: str, viewer: Viewer) -> PageFile | None:
        """The page as it is on disk now (None: missing, or private to this viewer)."""
        ...

    def put_page(self, slug: str, content: str, expected_hash: str | None, writer: Viewer) -> WrittenPage:
        """Write a page atomically and index it; a writer who may not see private pages never
        writes over one (what it sent is kept aside, docs/protocol.md §4.8)."""
        ...

    # -- file names, for the CLI ----------------------------------------------------

    def paths(self, slugs: list[str], viewer: Viewer) -> dict[str, str]:
        """slug → vault-relative file path."""
        ...

    def page_at(self, path: str, viewer: Viewer) -> PageRef | None:
        """The page indexed from a vault-relative file path."""
        ...

    def page_ref(self, slug: str, viewer: Viewer) -> PageRef | None: ...

    def titled(self, title: str, viewer: Viewer, limit: int) -> list[PageRef]:
        """Pages whose title is `title`, any case, by slug."""
        ...

    def names(self, viewer: Viewer) -> list[PageName]:
        """Every name of every page (slug, title, file, one row per alias)."""
        ...

    def chunk_hashes(self, viewer: Viewer) -> set[str]:
        """The content hash of every chunk (what the chunk vectors are keyed by)."""
        ...

    # -- writes -----------------------------------------------------------------------

    def note_retrieved(self, slugs: list[str], at: str) -> None:
        """Stamp pages a search returned with when (an entity tie-break)."""
        ...

    def close(self) -> None: ...
