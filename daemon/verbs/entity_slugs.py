"""One resolver from an entity name to a slug, shared by remember and recall.

If remember and recall canonicalized differently, a fact saved under
"Alice Example" would never be found under "people/alice-example". The order
is docs/protocol.md §4.4: an existing slug, a unique alias, a unique
people/companies page for a one-word name, a unique exact title or slug tail
(high-precision stand-ins for the reference's fuzzy step), then a
deterministic slugify.
"""

from __future__ import annotations

import sqlite3

from ...indexer.vault.slugs import looks_like_slug, normalize_alias, slugify, slugify_path

_PREFIXES = ("people", "companies")


def canonical_entity_slug(name: str, db: sqlite3.Connection | None, remote: bool = True) -> str:
    raw = name.strip()
    if db is not None:
        hit = _resolve_existing(raw, db, remote)
        if hit:
            return hit
    if "/" in raw:
        return slugify_path(raw) or slugify(raw)
    return slugify(raw)


def _resolve_existing(raw: str, db: sqlite3.Connection, remote: bool = True) -> str | None:
    # remote callers never resolve a private page (its slug would leak)
    vis = " AND visibility != 'private'" if remote else ""
    if looks_like_slug(raw):
        row = db.execute(f"SELECT slug FROM pages WHERE slug = ?{vis}", (raw,)).fetchone()
        if row:
            return row[0]
    key = normalize_alias(raw)
    if key:
        rows = db.execute(
            "SELECT DISTINCT p.slug FROM aliases a JOIN pages p ON p.id = a.page_id WHERE a.alias = ?"
            + vis.replace("visibility", "p.visibility") + " LIMIT 2",
            (key,),
        ).fetchall()
        if len(rows) == 1:
            return rows[0][0]
    if "/" not in raw:
        tok = slugify(raw)
        if tok and "-" not in tok:
            # slug ranges ('-' + 1 = '.') use the slug index; LIKE would scan every page
            rows = db.execute(
                "SELECT slug FROM pages WHERE (slug IN (?, ?) OR (slug > ? AND slug < ?) "
                f"OR (slug > ? AND slug < ?)){vis} LIMIT 2",
                (f"people/{tok}", f"companies/{tok}", f"people/{tok}-", f"people/{tok}.",
                 f"companies/{tok}-", f"companies/{tok}."),
            ).fetchall()
            if len(rows) == 1:
                return rows[0][0]
        # a multi-word name that is exactly one page's title
        title = " ".join(raw.split()).lower()
        rows = db.execute(f"SELECT slug FROM pages WHERE title_key = ?{vis} LIMIT 2", (title,)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        # a bare slug ("alice-example") that is the last segment of exactly one page
        if tok:
            rows = db.execute(f"SELECT slug FROM pages WHERE tail = ?{vis} LIMIT 2", (tok,)).fetchall()
            if len(rows) == 1:
                return rows[0][0]
    return None
