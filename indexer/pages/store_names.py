"""Names to pages: the entity resolvers and the lookups a person's typed name needs.

A mixin of the pages store (store.py). The ranking is the one both stores
share (page_policy/name_ranking.py); this module answers its lookups over
the page tables, applying the viewer through `hide_private` (visible.py) in
every query, so a private page never resolves for a viewer who may not see
it (its slug would leak).
"""

from __future__ import annotations

import sqlite3

from ..vault.visibility import Viewer
from ..page_policy.name_ranking import ARM_LIMIT, Arm, NameRanking, first_name_ranges
from ..page_policy.page_types import PageHead, PageName, PageRef
from ..page_policy.visible import hide_private

_HEAD = "p.id, p.slug, p.title, p.type, p.summary, p.lead, p.updated_at, p.last_retrieved_at"
_TOUCHED = "max(p.updated_at, COALESCE(p.last_retrieved_at, ''))"


def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


def head_of(row: sqlite3.Row) -> PageHead:
    return PageHead(slug=row["slug"], title=row["title"], type=row["type"], summary=row["summary"],
                    lead=row["lead"], updated_at=row["updated_at"], last_retrieved_at=row["last_retrieved_at"])


def _arm(arm: Arm, keys: list[str]) -> tuple[str, list[str]]:
    """The FROM … WHERE … of a name lookup (the viewer's condition is added after it) and its arguments."""
    if arm == "alias":
        return "aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = ?", keys[:1]
    if arm == "title":
        return f"pages p WHERE p.title_key IN ({_marks(keys)})", keys
    if arm == "slug":
        return f"pages p WHERE p.slug IN ({_marks(keys)})", keys
    if arm == "tail":
        return "pages p WHERE p.tail = ?", keys[:1]
    (lo1, hi1), (lo2, hi2) = first_name_ranges(keys[0])
    return "pages p WHERE ((p.slug > ? AND p.slug < ?) OR (p.slug > ? AND p.slug < ?))", [lo1, hi1, lo2, hi2]


class NameLookups(NameRanking):
    db: sqlite3.Connection

    def _heads_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[tuple[int, PageHead]]:
        where, args = _arm(arm, keys)
        fresh = "" if arm == "slug" else f" ORDER BY {_TOUCHED} DESC LIMIT {ARM_LIMIT}"
        rows = self.db.execute(f"SELECT {_HEAD} FROM {where}{hide_private(viewer, 'p.visibility')}{fresh}", args)
        return [(int(r["id"]), head_of(r)) for r in rows]

    def _slugs_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[str]:
        where, args = _arm(arm, keys)
        rows = self.db.execute(f"SELECT DISTINCT p.slug FROM {where}{hide_private(viewer, 'p.visibility')} LIMIT 2",
                               args)
        return [str(r[0]) for r in rows]

    def visible_slugs(self, slugs: list[str], viewer: Viewer) -> list[str]:
        """`slugs` without the pages the viewer may not see (in order; slugs of no page stay)."""
        if viewer.sees_private or not slugs:
            return list(slugs)
        hidden = {r[0] for r in self.db.execute(
            f"SELECT slug FROM pages WHERE slug IN ({_marks(slugs)}) AND NOT (1{hide_private(viewer)})", slugs)}
        return [s for s in slugs if s not in hidden]

    # -- file names, for the CLI -------------------------------------------------

    def paths(self, slugs: list[str], viewer: Viewer) -> dict[str, str]:
        """slug → vault-relative file path, for the slugs the tables know."""
        if not slugs:
            return {}
        rows = self.db.execute(f"SELECT slug, path FROM pages WHERE slug IN ({_marks(slugs)}){hide_private(viewer)}",
                               slugs)
        return {r[0]: r[1] for r in rows}

    def page_at(self, path: str, viewer: Viewer) -> PageRef | None:
        """The page indexed from this vault-relative file."""
        row = self.db.execute(f"SELECT slug, path FROM pages WHERE path = ?{hide_private(viewer)}", (path,)).fetchone()
        return PageRef(row[0], row[1]) if row else None

    def page_ref(self, slug: str, viewer: Viewer) -> PageRef | None:
        row = self.db.execute(f"SELECT slug, path FROM pages WHERE slug = ?{hide_private(viewer)}", (slug,)).fetchone()
        return PageRef(row[0], row[1]) if row else None

    def titled(self, title: str, viewer: Viewer, limit: int) -> list[PageRef]:
        """Pages (up to `limit`, by slug) whose title is `title` in any case."""
        rows = self.db.execute(f"SELECT slug, path FROM pages WHERE title_key = ?{hide_private(viewer)} "
                               "ORDER BY slug LIMIT ?", (title.strip().lower(), limit))
        return [PageRef(r[0], r[1]) for r in rows]

    def names(self, viewer: Viewer) -> list[PageName]:
        """Every page's names, one row per alias (alias None for a page without one)."""
        rows = self.db.execute("SELECT p.slug, p.title, p.path, a.alias FROM pages p "
                               f"LEFT JOIN aliases a ON a.page_id = p.id WHERE 1{hide_private(viewer, 'p.visibility')}")
        return [PageName(r[0], r[1], r[2], r[3]) for r in rows]
