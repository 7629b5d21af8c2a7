"""Names to pages over PostgreSQL: the entity resolvers and the lookups a typed name needs.

A mixin of the PostgreSQL pages store (pages_store.py), rank for rank the
embedded one (indexer/pages/store_names.py): alias, exact title or slug,
slug tail, a first name's people/companies pages; the most recently touched
first within a rank. Every query applies the viewer (`hide_private`), so a
private page never resolves for a viewer who may not see it. Slug ranges
compare bytes (`COLLATE "C"`), as SQLite does, whatever the database's locale.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ...indexer.page_policy.name_ranking import ARM_LIMIT, MAX_NAME
from ...indexer.page_policy.page_types import PageHead, PageName, PageRef
from ...indexer.page_policy.visible import hide_private
from ...indexer.vault.slugs import looks_like_slug, normalize_alias, slugify, slugify_path
from ...indexer.vault.visibility import Viewer

HEAD = "p.id, p.slug, p.title, p.type, p.summary, p.lead, p.updated_at, p.last_retrieved_at"
_TOUCHED = "greatest(p.updated_at, COALESCE(p.last_retrieved_at, ''))"
_C = 'COLLATE "C"'
_WS = re.compile(r"\s+")


def head_of(row: tuple) -> PageHead:
    """A PageHead from a row of HEAD's columns."""
    return PageHead(slug=row[1], title=row[2], type=row[3], summary=row[4], lead=row[5], updated_at=row[6],
                    last_retrieved_at=row[7])


class PgNameLookups:
    def _rows(self, sql: str, args: Any = None) -> list[tuple]:
        raise NotImplementedError

    def resolve_name(self, name: str, viewer: Viewer) -> list[PageHead]:
        """Candidate pages for an entity name, best first (docs/protocol.md §3.3)."""
        raw = name.strip()[:MAX_NAME]
        if not raw:
            return []
        vis = hide_private(viewer, "p.visibility")
        tail = slugify(raw)
        best: dict[int, tuple[int, tuple]] = {}

        def take(rank: int, sql: str, args: Iterable[Any]) -> None:
            for row in self._rows(sql, tuple(args)):
                if row[0] not in best or best[row[0]][0] > rank:
                    best[row[0]] = (rank, row)

        fresh = f"ORDER BY {_TOUCHED} {_C} DESC LIMIT {ARM_LIMIT}"
        alias = normalize_alias(raw)
        if alias:
            take(0, f"SELECT {HEAD} FROM aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = %s{vis} {fresh}",
                 (alias,))
        titles = sorted({raw.lower(), _WS.sub(" ", raw).lower()})
        take(1, f"SELECT {HEAD} FROM pages p WHERE p.title_key = ANY(%s){vis} {fresh}", (titles,))
        slugs = sorted({s for s in (raw, raw.lower(), tail, slugify_path(raw)) if s})
        take(1, f"SELECT {HEAD} FROM pages p WHERE p.slug = ANY(%s){vis}", (slugs,))
        if tail:
            take(2, f"SELECT {HEAD} FROM pages p WHERE p.tail = %s{vis} {fresh}", (tail,))
        if tail and "-" not in tail and "/" not in raw:
            # a first name finds people/<name>-… and companies/<name>-… (docs/protocol.md §4.4)
            take(3, f"SELECT {HEAD} FROM pages p WHERE ((p.slug {_C} > %s AND p.slug {_C} < %s) OR "
                    f"(p.slug {_C} > %s AND p.slug {_C} < %s)){vis} {fresh}",
                 (f"people/{tail}-", f"people/{tail}.", f"companies/{tail}-", f"companies/{tail}."))
        ranked = sorted(((rank, head_of(row)) for rank, row in best.values()), key=lambda rh: rh[1].slug)
        ranked.sort(key=lambda rh: rh[1].last_touched, reverse=True)
        ranked.sort(key=lambda rh: rh[0])
        return [head for _, head in ranked]

    def resolve_alias(self, name: str, viewer: Viewer) -> list[str]:
        """Slugs of at most two pages declaring `name` an alias (two: it is ambiguous)."""
        key = normalize_alias(name)
        if not key:
            return []
        return [r[0] for r in self._rows("SELECT DISTINCT p.slug FROM aliases a JOIN pages p ON p.id = a.page_id "
                                         f"WHERE a.alias = %s{hide_private(viewer, 'p.visibility')} LIMIT 2", (key,))]

    def resolve_entity(self, name: str, viewer: Viewer) -> str | None:
        """The one existing page an entity name means (docs/protocol.md §4.4), or None."""
        raw = name.strip()
        vis = hide_private(viewer)
        if looks_like_slug(raw):
            rows = self._rows(f"SELECT slug FROM pages WHERE slug = %s{vis}", (raw,))
            if rows:
                return str(rows[0][0])
        aliased = self.resolve_alias(raw, viewer)
        if len(aliased) == 1:
            return aliased[0]
        if "/" in raw:
            return None
        tok = slugify(raw)
        if tok and "-" not in tok:
            rows = self._rows(f"SELECT slug FROM pages WHERE (slug = ANY(%s) OR (slug {_C} > %s AND slug {_C} < %s) "
                              f"OR (slug {_C} > %s AND slug {_C} < %s)){vis} LIMIT 2",
                              ([f"people/{tok}", f"companies/{tok}"], f"people/{tok}-", f"people/{tok}.",
                               f"companies/{tok}-", f"companies/{tok}."))
            if len(rows) == 1:
                return str(rows[0][0])
        rows = self._rows(f"SELECT slug FROM pages WHERE title_key = %s{vis} LIMIT 2", (" ".join(raw.split()).lower(),))
        if len(rows) == 1:
            return str(rows[0][0])
        if tok:
            rows = self._rows(f"SELECT slug FROM pages WHERE tail = %s{vis} LIMIT 2", (tok,))
            if len(rows) == 1:
                return str(rows[0][0])
        return None

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
