"""Rows straight into the page tables, for tests about lookups rather than parsing.

The real indexer fills these tables from Markdown files; tests that check how
a card, a pack or a delta reads the tables seed exactly the rows they need,
with exact timestamps (file mtimes cannot share a millisecond on demand).
"""

from __future__ import annotations

import datetime as dt
import json

from brain.indexer.vault.slugs import normalize_alias

# default page times: one second apart, starting a month ago
_clock = [dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(days=30)]


def iso(ts: dt.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def days_ago(n: float) -> str:
    return iso(dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=n))


def now() -> str:
    return iso(dt.datetime.now(dt.timezone.utc))


def add_page(db, slug: str, title: str | None = None, *, type: str | None = None, visibility: str = "world",
             summary: str | None = None, lead: str = "", aliases=(), updated_at: str | None = None,
             last_retrieved_at: str | None = None) -> int:
    """Insert one page row (and its aliases); returns the page id."""
    if updated_at is None:
        _clock[0] += dt.timedelta(seconds=1)
        updated_at = iso(_clock[0])
    title = title or slug.rsplit("/", 1)[-1].replace("-", " ").title()
    cur = db.execute(
        "INSERT INTO pages (slug, path, title, title_key, tail, type, visibility, summary, lead, tags, "
        "frontmatter, updated_at, indexed_at, last_retrieved_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (slug, slug + ".md", title, title.lower(), slug.rsplit("/", 1)[-1], type, visibility, summary, lead,
         "[]", json.dumps({"title": title}), updated_at, updated_at, last_retrieved_at),
    )
    pid = cur.lastrowid
    for a in aliases:
        db.execute("INSERT OR IGNORE INTO aliases (alias, page_id) VALUES (?, ?)", (normalize_alias(a), pid))
    return pid


def page_id(db, slug: str) -> int:
    return db.execute("SELECT id FROM pages WHERE slug = ?", (slug,)).fetchone()[0]


def add_link(db, src: str, dst: str, type: str = "mentions", context: str | None = None,
             source: str = "wikilink") -> None:
    db.execute("INSERT INTO links (from_id, target, to_id, type, context, source) VALUES (?,?,?,?,?,?)",
               (page_id(db, src), dst, page_id(db, dst), type, context, source))


def add_timeline(db, slug: str, date: str, summary: str) -> None:
    db.execute("INSERT INTO timeline (page_id, date, source, summary) VALUES (?,?,?,?)",
               (page_id(db, slug), date, "markdown", summary))


def touch(db, slug: str, updated_at: str) -> None:
    db.execute("UPDATE pages SET updated_at = ? WHERE slug = ?", (updated_at, slug))
