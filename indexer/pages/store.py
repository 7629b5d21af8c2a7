"""The pages store over the page tables: the embedded implementation of the pages contract.

It satisfies `PagesStore` (daemon/stores/pages.py) by its shape; the indexer
never imports the daemon. Every read takes the `Viewer` it is for and drops
what that viewer may not see inside the query (`hide_private`, visible.py),
and hands back plain values (page_policy/page_types.py), never a row or a
cursor (docs/architecture.md, "Stores"). Names to pages are in
store_names.py (the ranking is page_policy/name_ranking.py's); search and
the page files, once the engine opens them with the index, in store_files.py.

Reads share the engine's connection to the page tables; the tables
themselves are written by the VaultIndex (its own connection), except the
retrieval stamp a search leaves behind (`note_retrieved`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..vault.slugs import path_to_slug
from ..vault.visibility import Viewer
from .store_files import FileReads
from .store_names import NameLookups, head_of
from ..page_policy.page_order import LINKS_PER_DIRECTION, TASK_DATE, PageLinkReads
from ..page_policy.page_types import (Backlink, ChangedPage, Chunk, LinkEnd, LinkedTask, ListedPage, PageCounts, PageDating,
                          PageHead, TimelineEntry)
from ..page_policy.visible import hide_private



def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


class SqlitePagesStore(NameLookups, FileReads, PageLinkReads):
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    @classmethod
    def open_read_only(cls, index_file: Path) -> "SqlitePagesStore | None":
        """The tables of a cache another process owns, never created or migrated here;
        None when there are none yet (or they cannot be read)."""
        if not index_file.is_file():
            return None
        try:
            db = sqlite3.connect(f"file:{index_file}?mode=ro", uri=True, timeout=5, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("SELECT 1 FROM pages LIMIT 1")
        except sqlite3.Error:
            return None
        return cls(db)

    def _page_id(self, slug: str, viewer: Viewer) -> int | None:
        row = self.db.execute(f"SELECT id FROM pages WHERE slug = ?{hide_private(viewer)}", (slug,)).fetchone()
        return int(row[0]) if row else None

    # -- one page -----------------------------------------------------------------

    def page(self, slug: str, viewer: Viewer) -> PageHead | None:
        row = self.db.execute("SELECT slug, title, type, summary, lead, updated_at, last_retrieved_at FROM pages "
                              f"WHERE slug = ?{hide_private(viewer)}", (slug,)).fetchone()
        return head_of(row) if row else None

    def aliases(self, slug: str, viewer: Viewer) -> list[str]:
        """Each alias as the page writes it (its lookup key is lowercased), by key."""
        return [r[0] for r in self.db.execute(
            "SELECT COALESCE(NULLIF(a.display, ''), a.alias) FROM aliases a JOIN pages p ON p.id = a.page_id "
            f"WHERE p.slug = ?{hide_private(viewer, 'p.visibility')} ORDER BY a.alias", (slug,))]

    def all_tags(self, viewer: Viewer) -> list[str]:
        """Every tag the viewer's pages carry, once each, sorted (shell completion of --tag)."""
        found: set[str] = set()
        for (raw,) in self.db.execute(f"SELECT tags FROM pages WHERE tags != '[]'{hide_private(viewer)}"):
            try:
                tags = json.loads(raw)
            except ValueError:
                continue
            if isinstance(tags, list):
                found.update(t for t in tags if isinstance(t, str))
        return sorted(found)

    def tags(self, slug: str, viewer: Viewer) -> list[str]:
        row = self.db.execute(f"SELECT tags FROM pages WHERE slug = ?{hide_private(viewer)}", (slug,)).fetchone()
        try:
            tags = json.loads(row[0]) if row else []
        except ValueError:
            return []
        return [str(t) for t in tags] if isinstance(tags, list) else []

    def timeline(self, slug: str, viewer: Viewer, limit: int) -> list[TimelineEntry]:
        """The page's newest timeline entries, newest first."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        return [TimelineEntry(r[0], r[1]) for r in self.db.execute(
            "SELECT date, summary FROM timeline WHERE page_id = ? ORDER BY date DESC LIMIT ?", (pid, limit))]

    def chunks(self, slug: str, viewer: Viewer) -> list[Chunk]:
        """The page's indexed text, cut at headings, in page order."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        return [Chunk(r[0], r[1]) for r in self.db.execute(
            "SELECT heading, text FROM chunks WHERE page_id = ? ORDER BY ord", (pid,))]

    def _link_ends(self, page_id: int, outgoing: bool, viewer: Viewer) -> list[LinkEnd]:
        near, far, newest_first = ("from_id", "to_id", "") if outgoing else ("to_id", "from_id", " DESC")
        rows = self.db.execute(
            f"SELECT l.type, l.context, p.slug FROM links l JOIN pages p ON p.id = l.{far} "
            f"WHERE l.{near} = ? AND l.{far} != l.{near} AND l.source != 'mentions'"
            f"{hide_private(viewer, 'p.visibility')} ORDER BY l.id{newest_first} LIMIT ?",
            (page_id, LINKS_PER_DIRECTION))
        return [LinkEnd(r[0], r[1], r[2]) for r in rows]

    def backlink_count(self, slug: str, viewer: Viewer) -> int:
        """Distinct other pages the viewer may see that link here (bare-name mentions excluded)."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return 0
        if viewer.sees_private:
            # the covering index alone (db.py, migration 3): a hub page has thousands
            sql = ("SELECT COUNT(DISTINCT from_id) FROM links "
                   "WHERE to_id = ? AND from_id != to_id AND source != 'mentions'")
        else:
            sql = ("SELECT COUNT(DISTINCT l.from_id) FROM links l JOIN pages p ON p.id = l.from_id "
                   "WHERE l.to_id = ? AND l.from_id != l.to_id AND l.source != 'mentions'"
                   + hide_private(viewer, "p.visibility"))
        return int(self.db.execute(sql, (pid,)).fetchone()[0])

    def backlinks(self, slug: str, viewer: Viewer) -> list[Backlink] | None:
        """Pages linking to a page, by slug (None when the page is unknown to this viewer);
        `slug` may also be the page's file path."""
        slug = (slug or "").strip()
        pid = self._page_id(slug, viewer)
        if pid is None and slug and not self._exists(slug):
            pid = self._page_id(path_to_slug(slug), viewer)
        if pid is None:
            return None
        rows = self.db.execute(
            "SELECT p.slug, p.title, l.type, l.context, l.source FROM links l JOIN pages p ON p.id = l.from_id "
            f"WHERE l.to_id = ?{hide_private(viewer, 'p.visibility')} ORDER BY p.slug, l.id", (pid,))
        return [Backlink(slug=r[0], title=r[1], type=r[2], context=r[3] or None, source=r[4]) for r in rows]

    def linked_tasks(self, slug: str, viewer: Viewer, limit: int) -> list[LinkedTask]:
        """Open tasks on other pages the viewer may see that link this page, newest date first
        (one per task line, however many times it links here)."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return []
        # grouped in the covering index's order (db.py, migration 7): no temporary tree for it
        rows = self.db.execute(
            "SELECT p.slug, l.task, l.due, p.updated_at FROM links l JOIN pages p ON p.id = l.from_id "
            f"WHERE l.to_id = ? AND l.task IS NOT NULL AND l.from_id != l.to_id{hide_private(viewer, 'p.visibility')} "
            f"GROUP BY l.from_id, l.task, l.due ORDER BY {TASK_DATE} DESC, p.slug, MIN(l.id) LIMIT ?", (pid, limit))
        return [LinkedTask(r[0], r[1], r[2], r[3]) for r in rows]

    def _exists(self, slug: str) -> bool:
        return self.db.execute("SELECT 1 FROM pages WHERE slug = ?", (slug,)).fetchone() is not None

    # -- many pages ---------------------------------------------------------------

    def list_pages(self, prefix: str | None, limit: int, viewer: Viewer) -> list[ListedPage]:
        """Pages under a slug prefix, most recently updated first."""
        where, args = ["1"], []
        if prefix:
            where.append("slug >= ? AND slug < ?")
            args += [prefix, prefix + "\U0010ffff"]   # above every character, astral ones included
        rows = self.db.execute(f"SELECT slug, title, type, updated_at FROM pages WHERE {' AND '.join(where)}"
                               f"{hide_private(viewer)} ORDER BY updated_at DESC, slug LIMIT ?", [*args, limit])
        return [ListedPage(slug=r[0], title=r[1], type=r[2], updated_at=r[3]) for r in rows]

    def dating(self, slugs: list[str], viewer: Viewer) -> dict[str, PageDating]:
        """slug → what dates it, for the pages among `slugs` the viewer may see."""
        if not slugs:
            return {}
        rows = self.db.execute(f"SELECT id, slug, title, updated_at, frontmatter FROM pages "
                               f"WHERE slug IN ({_marks(slugs)}){hide_private(viewer)}", slugs).fetchall()
        dates: dict[int, list[str]] = {}
        ids = [r["id"] for r in rows]
        if ids:
            for pid, date in self.db.execute(
                    f"SELECT page_id, date FROM timeline WHERE page_id IN ({','.join('?' * len(ids))})", ids):
                dates.setdefault(pid, []).append(date)
        return {r["slug"]: PageDating(r["slug"], r["title"], r["updated_at"], _frontmatter_date(r["frontmatter"]),
                                      dates.get(r["id"], [])) for r in rows}

    def pages_changed_since(self, since: str, after_slug: str | None, until: str, viewer: Viewer,
                            limit: int) -> list[ChangedPage]:
        """Pages changed in [since, until] after the (since, after_slug) keyset, oldest first.

        after_slug None means strictly after `since`; "" takes the whole bucket at it."""
        where = ["updated_at >= ?", "updated_at <= ?"]
        params: list[str | int] = [since, until]
        if after_slug is None:
            where.append("updated_at > ?")
            params.append(since)
        else:
            where.append("(updated_at > ? OR slug > ?)")
            params += [since, after_slug]
        rows = self.db.execute(f"SELECT slug, title, updated_at FROM pages WHERE {' AND '.join(where)}"
                               f"{hide_private(viewer)} ORDER BY updated_at, slug LIMIT ?", [*params, limit])
        return [ChangedPage(r[0], r[1], r[2]) for r in rows]

    def count_pages(self, viewer: Viewer) -> PageCounts:
        """How many pages, chunks and indexing problems the viewer may know of: a remote
        caller learns nothing of how many private pages exist (docs/protocol.md §4.8)."""
        def one(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0])

        if viewer.sees_private:
            return PageCounts(one("SELECT COUNT(*) FROM pages"), one("SELECT COUNT(*) FROM chunks"),
                              one("SELECT COUNT(*) FROM problems"))
        vis = hide_private(viewer, "p.visibility")
        return PageCounts(
            one(f"SELECT COUNT(*) FROM pages p WHERE 1{vis}"),
            one(f"SELECT COUNT(*) FROM chunks c JOIN pages p ON p.id = c.page_id WHERE 1{vis}"),
            one("SELECT COUNT(*) FROM problems WHERE path NOT IN "
                f"(SELECT path FROM pages p WHERE NOT (1{vis}))"))

    def chunk_hashes(self, viewer: Viewer) -> set[str]:
        """The content hash of every chunk the viewer may see (what the vectors are keyed by)."""
        if viewer.sees_private:  # every chunk: the hash index alone
            return {r[0] for r in self.db.execute("SELECT DISTINCT hash FROM chunks")}
        return {r[0] for r in self.db.execute(
            f"SELECT DISTINCT c.hash FROM chunks c JOIN pages p ON p.id = c.page_id WHERE 1"
            f"{hide_private(viewer, 'p.visibility')}")}

    # -- writes -------------------------------------------------------------------

    def note_retrieved(self, slugs: list[str], at: str) -> None:
        """Stamp pages a search returned (the tie-break among entity candidates)."""
        self.db.executemany("UPDATE pages SET last_retrieved_at = ? WHERE slug = ?", [(at, s) for s in slugs])

    def close(self) -> None:
        self.db.close()


def _frontmatter_date(frontmatter: str | None) -> str | None:
    try:
        fm = json.loads(frontmatter or "{}")
    except ValueError:
        return None
    if isinstance(fm, dict) and fm.get("date") not in (None, ""):
        return str(fm["date"])
    return None
