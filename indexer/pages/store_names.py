"""Names to pages: the entity resolvers and the lookups a person's typed name needs.

A mixin of the pages store (store.py): it reads `self.db` and applies the
viewer through `hide_private` (visible.py) on every query, so a private page
never resolves for a viewer who may not see it (its slug would leak).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from ..vault.slugs import looks_like_slug, normalize_alias, slugify, slugify_path
from ..vault.visibility import Viewer
from ..page_policy.name_ranking import ARM_LIMIT, MAX_NAME
from ..page_policy.page_types import PageHead, PageName, PageRef
from ..page_policy.visible import hide_private


_HEAD = "p.id, p.slug, p.title, p.type, p.summary, p.lead, p.updated_at, p.last_retrieved_at"
_TOUCHED = "max(p.updated_at, COALESCE(p.last_retrieved_at, ''))"
_WS = re.compile(r"\s+")


def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


def head_of(row: sqlite3.Row) -> PageHead:
    return PageHead(slug=row["slug"], title=row["title"], type=row["type"], summary=row["summary"],
                    lead=row["lead"], updated_at=row["updated_at"], last_retrieved_at=row["last_retrieved_at"])


class NameLookups:
    db: sqlite3.Connection

    def resolve_name(self, name: str, viewer: Viewer) -> list[PageHead]:
        """Candidate pages for an entity name, best first: alias > exact title/slug > slug
        suffix > (a one-word name) people/companies pages whose slug starts with it
        (docs/protocol.md §3.3). Within a rank the most recently touched page wins; the
        slug breaks remaining ties so the order is stable."""
        raw = name.strip()[:MAX_NAME]
        if not raw:
            return []
        vis = hide_private(viewer, "p.visibility")
        tail = slugify(raw)
        best: dict[int, tuple[int, sqlite3.Row]] = {}

        def take(rank: int, sql: str, args: Iterable[str]) -> None:
            for row in self.db.execute(sql, tuple(args)):
                if row["id"] not in best or best[row["id"]][0] > rank:
                    best[row["id"]] = (rank, row)

        fresh = f"ORDER BY {_TOUCHED} DESC LIMIT {ARM_LIMIT}"
        alias = normalize_alias(raw)
        if alias:
            take(0, f"SELECT {_HEAD} FROM aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = ?{vis} {fresh}",
                 (alias,))
        titles = sorted({raw.lower(), _WS.sub(" ", raw).lower()})
        take(1, f"SELECT {_HEAD} FROM pages p WHERE p.title_key IN ({_marks(titles)}){vis} {fresh}", titles)
        slugs = sorted({s for s in (raw, raw.lower(), tail, slugify_path(raw)) if s})
        take(1, f"SELECT {_HEAD} FROM pages p WHERE p.slug IN ({_marks(slugs)}){vis}", slugs)
        if tail:
            # `tail` is the last slug segment, so tail = x is "slug ends with /x"
            # (or is x itself, which the exact arm already ranked higher)
            take(2, f"SELECT {_HEAD} FROM pages p WHERE p.tail = ?{vis} {fresh}", (tail,))
        if tail and "-" not in tail and "/" not in raw:
            # beyond the reference: a first name finds people/<name>-… and
            # companies/<name>-…, the pages remember files "Alice"'s facts under (§4.4)
            take(3, f"SELECT {_HEAD} FROM pages p WHERE ((p.slug > ? AND p.slug < ?) OR "
                    f"(p.slug > ? AND p.slug < ?)){vis} {fresh}",
                 (f"people/{tail}-", f"people/{tail}.", f"companies/{tail}-", f"companies/{tail}."))
        # stable sorts, least significant key first: slug, then touched desc, then rank
        ranked = sorted(((rank, head_of(row)) for rank, row in best.values()), key=lambda rh: rh[1].slug)
        ranked.sort(key=lambda rh: rh[1].last_touched, reverse=True)
        ranked.sort(key=lambda rh: rh[0])
        return [head for _, head in ranked]

    def resolve_alias(self, name: str, viewer: Viewer) -> list[str]:
        """Slugs of the pages (at most two: enough to tell unique from ambiguous) declaring `name` an alias."""
        key = normalize_alias(name)
        if not key:
            return []
        rows = self.db.execute("SELECT DISTINCT p.slug FROM aliases a JOIN pages p ON p.id = a.page_id "
                               f"WHERE a.alias = ?{hide_private(viewer, 'p.visibility')} LIMIT 2", (key,))
        return [r[0] for r in rows]

    def resolve_entity(self, name: str, viewer: Viewer) -> str | None:
        """The one existing page an entity name means, for remember and recall to file facts
        under (docs/protocol.md §4.4): an existing slug, a unique alias, a unique
        people/companies page for a one-word name, a unique exact title or slug tail."""
        raw = name.strip()
        vis = hide_private(viewer)
        if looks_like_slug(raw):
            row = self.db.execute(f"SELECT slug FROM pages WHERE slug = ?{vis}", (raw,)).fetchone()
            if row:
                return str(row[0])
        aliased = self.resolve_alias(raw, viewer)
        if len(aliased) == 1:
            return aliased[0]
        if "/" in raw:
            return None
        tok = slugify(raw)
        if tok and "-" not in tok:
            # slug ranges ('-' + 1 = '.') use the slug index; LIKE would scan every page
            rows = self.db.execute(
                "SELECT slug FROM pages WHERE (slug IN (?, ?) OR (slug > ? AND slug < ?) "
                f"OR (slug > ? AND slug < ?)){vis} LIMIT 2",
                (f"people/{tok}", f"companies/{tok}", f"people/{tok}-", f"people/{tok}.",
                 f"companies/{tok}-", f"companies/{tok}."),
            ).fetchall()
            if len(rows) == 1:
                return str(rows[0][0])
        # a multi-word name that is exactly one page's title
        title = " ".join(raw.split()).lower()
        rows = self.db.execute(f"SELECT slug FROM pages WHERE title_key = ?{vis} LIMIT 2", (title,)).fetchall()
        if len(rows) == 1:
            return str(rows[0][0])
        # a bare slug ("alice-example") that is the last segment of exactly one page
        if tok:
            rows = self.db.execute(f"SELECT slug FROM pages WHERE tail = ?{vis} LIMIT 2", (tok,)).fetchall()
            if len(rows) == 1:
                return str(rows[0][0])
        return None

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
