"""The pages store over PostgreSQL: the second implementation of the pages contract.

It satisfies `PagesStore` (daemon/stores/pages.py) as the embedded
`SqlitePagesStore` (indexer/pages/store.py) does, read for read: the same
questions, the same order, the same plain values back. Every read takes the
`Viewer` it is for and drops what that viewer may not see inside the query,
with the one written rule of indexer/page_policy/visible.py (`hide_private`); a page
whose frontmatter does not parse was stored private by the indexer, so it
fails closed here too. Names to pages are in pages_names.py; search, the page
files and put_page in pages_files.py.

Reads use one autocommit connection (psycopg serialises threads on it); the
tables are written by the vault indexer (indexer.py), except the retrieval
stamp a search leaves behind (`note_retrieved`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg

from ...indexer.page_policy.page_order import LINKS_PER_DIRECTION, TASK_DATE, PageLinkReads
from ...indexer.page_policy.page_types import (Backlink, ChangedPage, Chunk, LinkEnd, LinkedTask, ListedPage,
                                           PageCounts, PageDating, PageHead, TimelineEntry)
from ...indexer.page_policy.visible import hide_private
from ...indexer.vault.slugs import path_to_slug
from ...indexer.vault.visibility import Viewer
from .pages_files import PgFileReads
from .pages_names import HEAD, PgNameLookups, head_of


def without_nul(value: Any) -> Any:
    """A caller's text with NUL shown as U+FFFD, as the indexer stores it: PostgreSQL text cannot hold
    NUL, and a name or query with one must find nothing, not fail."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, (list, tuple)):
        return type(value)(without_nul(v) for v in value)
    if isinstance(value, dict):
        return {k: without_nul(v) for k, v in value.items()}
    return value


class PgPagesStore(PgNameLookups, PgFileReads, PageLinkReads):
    def __init__(self, dsn: str, vault: Path | None = None):
        self.dsn = dsn
        self.vault = Path(vault) if vault is not None else None
        self.db = psycopg.connect(dsn, autocommit=True)
        self._write_lock = threading.Lock()
        self._search_lock = threading.Lock()

    def _rows(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        args = without_nul(args)
        try:
            return self.db.execute(sql, args).fetchall()
        except psycopg.OperationalError:
            if not (self.db.broken or self.db.closed):
                raise
            # the server dropped the connection (a restart, a failover): one new one, one retry
            self.db = psycopg.connect(self.dsn, autocommit=True)
            return self.db.execute(sql, args).fetchall()

    def _page_id(self, slug: str, viewer: Viewer) -> int | None:
        row = self._rows(f"SELECT id FROM pages WHERE slug = %s{hide_private(viewer)}", (slug,))
        return int(row[0][0]) if row else None

    # -- one page -------------------------------------------------------------------

    def page(self, slug: str, viewer: Viewer) -> PageHead | None:
        rows = self._rows(f"SELECT {HEAD} FROM pages p WHERE p.slug = %s{hide_private(viewer, 'p.visibility')}",
                          (slug,))
        return head_of(rows[0]) if rows else None

    def aliases(self, slug: str, viewer: Viewer) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT COALESCE(NULLIF(a.display, ''), a.alias) FROM aliases a JOIN pages p ON p.id = a.page_id "
            f"WHERE p.slug = %s{hide_private(viewer, 'p.visibility')} ORDER BY a.alias", (slug,))]

    def tags(self, slug: str, viewer: Viewer) -> list[str]:
        rows = self._rows(f"SELECT tags FROM pages WHERE slug = %s{hide_private(viewer)}", (slug,))
        tags = rows[0][0] if rows else []
        return [str(t) for t in tags] if isinstance(tags, list) else []

    def timeline(self, slug: str, viewer: Viewer, limit: int) -> list[TimelineEntry]:
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        return [TimelineEntry(r[0], r[1]) for r in self._rows(
            "SELECT date, summary FROM timeline WHERE page_id = %s ORDER BY date DESC LIMIT %s", (pid, limit))]

    def chunks(self, slug: str, viewer: Viewer) -> list[Chunk]:
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        return [Chunk(r[0], r[1]) for r in self._rows(
            "SELECT heading, text FROM chunks WHERE page_id = %s ORDER BY ord", (pid,))]

    def _link_ends(self, page_id: int, outgoing: bool, viewer: Viewer) -> list[LinkEnd]:
        near, far, newest_first = ("from_id", "to_id", "") if outgoing else ("to_id", "from_id", " DESC")
        rows = self._rows(f"SELECT l.type, l.context, p.slug FROM links l JOIN pages p ON p.id = l.{far} "
                          f"WHERE l.{near} = %s AND l.{far} <> l.{near} AND l.source <> 'mentions'"
                          f"{hide_private(viewer, 'p.visibility')} ORDER BY l.id{newest_first} LIMIT %s",
                          (page_id, LINKS_PER_DIRECTION))
        return [LinkEnd(*r) for r in rows]

    def backlink_count(self, slug: str, viewer: Viewer) -> int:
        pid = self._page_id(slug, viewer)
        if pid is None:
            return 0
        return int(self._rows(
            "SELECT COUNT(DISTINCT l.from_id) FROM links l JOIN pages p ON p.id = l.from_id "
            f"WHERE l.to_id = %s AND l.from_id <> l.to_id AND l.source <> 'mentions'"
            f"{hide_private(viewer, 'p.visibility')}", (pid,))[0][0])

    def backlinks(self, slug: str, viewer: Viewer) -> list[Backlink] | None:
        """Every link into the page (None: unknown to this viewer); `slug` may be the page's file path."""
        slug = (slug or "").strip()
        pid = self._page_id(slug, viewer)
        if pid is None and slug and not self._rows("SELECT 1 FROM pages WHERE slug = %s", (slug,)):
            pid = self._page_id(path_to_slug(slug), viewer)
        if pid is None:
            return None
        rows = self._rows("SELECT p.slug, p.title, l.type, l.context, l.source FROM links l "
                          f"JOIN pages p ON p.id = l.from_id WHERE l.to_id = %s{hide_private(viewer, 'p.visibility')} "
                          "ORDER BY p.slug COLLATE \"C\", l.id", (pid,))
        return [Backlink(slug=r[0], title=r[1], type=r[2], context=r[3] or None, source=r[4]) for r in rows]

    def linked_tasks(self, slug: str, viewer: Viewer, limit: int) -> list[LinkedTask]:
        """Open tasks on other pages the viewer may see that link this page, newest date first."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        # one row per task line however often it links here (a page's columns follow its id)
        rows = self._rows(
            "SELECT p.slug, l.task, l.due, p.updated_at FROM links l JOIN pages p ON p.id = l.from_id "
            f"WHERE l.to_id = %s AND l.task IS NOT NULL AND l.from_id <> l.to_id{hide_private(viewer, 'p.visibility')} "
            f"GROUP BY p.id, l.task, l.due ORDER BY {TASK_DATE} DESC, p.slug COLLATE \"C\", MIN(l.id) LIMIT %s",
            (pid, limit))
        return [LinkedTask(*r) for r in rows]

    # -- many pages -------------------------------------------------------------------

    def list_pages(self, prefix: str | None, limit: int, viewer: Viewer) -> list[ListedPage]:
        where, args = "TRUE", []
        if prefix:
            where = 'slug COLLATE "C" >= %s AND slug COLLATE "C" < %s'
            args = [prefix, prefix + "\U0010ffff"]
        rows = self._rows(f"SELECT slug, title, type, updated_at FROM pages WHERE {where}{hide_private(viewer)} "
                          "ORDER BY updated_at DESC, slug COLLATE \"C\" LIMIT %s", [*args, limit])
        return [ListedPage(slug=r[0], title=r[1], type=r[2], updated_at=r[3]) for r in rows]

    def dating(self, slugs: list[str], viewer: Viewer) -> dict[str, PageDating]:
        if not slugs:
            return {}
        rows = self._rows("SELECT p.slug, p.title, p.updated_at, p.frontmatter->>'date', "
                          "ARRAY(SELECT t.date FROM timeline t WHERE t.page_id = p.id ORDER BY t.date) FROM pages p "
                          f"WHERE p.slug = ANY(%s){hide_private(viewer, 'p.visibility')}", (list(slugs),))
        return {r[0]: PageDating(r[0], r[1], r[2], r[3] if r[3] not in (None, "") else None, list(r[4]))
                for r in rows}

    def pages_changed_since(self, since: str, after_slug: str | None, until: str, viewer: Viewer,
                            limit: int) -> list[ChangedPage]:
        """Pages changed in [since, until] after the (since, after_slug) keyset, oldest first."""
        if after_slug is None:
            keyset, args = "updated_at > %s", [since]
        else:
            keyset, args = "(updated_at > %s OR slug COLLATE \"C\" > %s)", [since, after_slug]
        rows = self._rows(f"SELECT slug, title, updated_at FROM pages WHERE updated_at >= %s AND updated_at <= %s "
                          f"AND {keyset}{hide_private(viewer)} ORDER BY updated_at, slug COLLATE \"C\" LIMIT %s",
                          [since, until, *args, limit])
        return [ChangedPage(r[0], r[1], r[2]) for r in rows]

    def count_pages(self, viewer: Viewer) -> PageCounts:
        """Pages, chunks and problems the viewer may know of: nothing of how many private pages exist."""
        vis = hide_private(viewer, "p.visibility")
        pages, chunks = self._rows(f"SELECT (SELECT COUNT(*) FROM pages p WHERE TRUE{vis}), "
                                   f"(SELECT COUNT(*) FROM chunks c JOIN pages p ON p.id = c.page_id WHERE TRUE{vis})")[0]
        problems = self._rows("SELECT COUNT(*) FROM problems WHERE path NOT IN "
                              f"(SELECT path FROM pages p WHERE NOT (TRUE{vis}))")[0][0]
        return PageCounts(int(pages), int(chunks), int(problems))

    def chunk_hashes(self, viewer: Viewer) -> set[str]:
        return {r[0] for r in self._rows("SELECT DISTINCT c.hash FROM chunks c JOIN pages p ON p.id = c.page_id "
                                         f"WHERE TRUE{hide_private(viewer, 'p.visibility')}")}

    # -- writes -------------------------------------------------------------------------

    def note_retrieved(self, slugs: list[str], at: str) -> None:
        """Stamp pages a search returned (the tie-break among entity candidates)."""
        if slugs:
            self.db.execute("UPDATE pages SET last_retrieved_at = %s WHERE slug = ANY(%s)", (at, list(slugs)))

    def close(self) -> None:
        self.close_files()
        self.db.close()

