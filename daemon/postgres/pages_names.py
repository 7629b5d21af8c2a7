"""Names to pages over PostgreSQL: the lookups the shared name ranking asks for, and the file names.

A mixin of the PostgreSQL pages store (pages_store.py). The ranking is the
one both stores share (indexer/page_policy/name_ranking.py); this module
answers its lookups. Every query applies the viewer (`hide_private`), so a
private page never resolves for a viewer who may not see it. Slug ranges
compare bytes (`COLLATE "C"`), as SQLite does, whatever the database's locale.
"""

from __future__ import annotations

from typing import Any

from ...indexer.page_policy.name_ranking import ARM_LIMIT, Arm, NameRanking, first_name_ranges
from ...indexer.page_policy.page_types import PageHead, PageName, PageRef
from ...indexer.page_policy.visible import hide_private
from ...indexer.vault.visibility import Viewer

HEAD = "p.id, p.slug, p.title, p.type, p.summary, p.lead, p.updated_at, p.last_retrieved_at"
_TOUCHED = "greatest(p.updated_at, COALESCE(p.last_retrieved_at, ''))"
_C = 'COLLATE "C"'


def head_of(row: tuple[Any, ...]) -> PageHead:
    """A PageHead from a row of HEAD's columns."""
    return PageHead(slug=row[1], title=row[2], type=row[3], summary=row[4], lead=row[5], updated_at=row[6],
                    last_retrieved_at=row[7])


def _arm(arm: Arm, keys: list[str]) -> tuple[str, tuple[Any, ...]]:
    """The FROM … WHERE … of a name lookup (the viewer's condition is added after it) and its arguments."""
    if arm == "alias":
        return "aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = %s", (keys[0],)
    if arm == "title":
        return "pages p WHERE p.title_key = ANY(%s)", (keys,)
    if arm == "slug":
        return "pages p WHERE p.slug = ANY(%s)", (keys,)
    if arm == "tail":
        return "pages p WHERE p.tail = %s", (keys[0],)
    (lo1, hi1), (lo2, hi2) = first_name_ranges(keys[0])
    return (f"pages p WHERE ((p.slug {_C} > %s AND p.slug {_C} < %s) OR (p.slug {_C} > %s AND p.slug {_C} < %s))",
            (lo1, hi1, lo2, hi2))


class PgNameLookups(NameRanking):
    def _rows(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _heads_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[tuple[int, PageHead]]:
        where, args = _arm(arm, keys)
        fresh = "" if arm == "slug" else f" ORDER BY {_TOUCHED} {_C} DESC LIMIT {ARM_LIMIT}"
        rows = self._rows(f"SELECT {HEAD} FROM {where}{hide_private(viewer, 'p.visibility')}{fresh}", args)
        return [(int(r[0]), head_of(r)) for r in rows]

    def _slugs_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[str]:
        where, args = _arm(arm, keys)
        return [str(r[0]) for r in self._rows(f"SELECT DISTINCT p.slug FROM {where}"
                                              f"{hide_private(viewer, 'p.visibility')} LIMIT 2", args)]

    def visible_slugs(self, slugs: list[str], viewer: Viewer) -> list[str]:
        """`slugs`, in order, without the pages the viewer may not see (slugs of no page stay)."""
        if viewer.sees_private or not slugs:
            return list(slugs)
        hidden = {r[0] for r in self._rows(f"SELECT slug FROM pages WHERE slug = ANY(%s) "
                                           f"AND NOT (TRUE{hide_private(viewer)})", (list(slugs),))}
        return [s for s in slugs if s not in hidden]

    # -- file names, for the CLI ----------------------------------------------------------

    def paths(self, slugs: list[str], viewer: Viewer) -> dict[str, str]:
        if not slugs:
            return {}
        return {r[0]: r[1] for r in self._rows(f"SELECT slug, path FROM pages WHERE slug = ANY(%s)"
                                               f"{hide_private(viewer)}", (list(slugs),))}

    def page_at(self, path: str, viewer: Viewer) -> PageRef | None:
        rows = self._rows(f"SELECT slug, path FROM pages WHERE path = %s{hide_private(viewer)}", (path,))
        return PageRef(rows[0][0], rows[0][1]) if rows else None

    def page_ref(self, slug: str, viewer: Viewer) -> PageRef | None:
        rows = self._rows(f"SELECT slug, path FROM pages WHERE slug = %s{hide_private(viewer)}", (slug,))
        return PageRef(rows[0][0], rows[0][1]) if rows else None

    def titled(self, title: str, viewer: Viewer, limit: int) -> list[PageRef]:
        rows = self._rows(f"SELECT slug, path FROM pages WHERE title_key = %s{hide_private(viewer)} "
                          f"ORDER BY slug {_C} LIMIT %s", (title.strip().lower(), limit))
        return [PageRef(r[0], r[1]) for r in rows]

    def names(self, viewer: Viewer) -> list[PageName]:
        """Every page's names, one row per alias (alias None for a page without one)."""
        rows = self._rows("SELECT p.slug, p.title, p.path, a.alias FROM pages p LEFT JOIN aliases a "
                          f"ON a.page_id = p.id WHERE TRUE{hide_private(viewer, 'p.visibility')}")
        return [PageName(r[0], r[1], r[2], r[3]) for r in rows]
