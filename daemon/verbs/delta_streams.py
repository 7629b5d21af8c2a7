"""delta's pages arm — pages by (updated_at, slug), oldest first, read after a
keyset and packed under a budget — and the cost of an item of either arm (the
facts arm is delta_facts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol.budget import estimate_tokens, pack_greedy

PAGE_CAP = 50
FACT_CAP = 50
SOURCE_ID = "default"


def fetch_pages(db, since: str, slug: str | None, world_only: bool, now: str) -> list:
    """Up to 51 pages after the (since, slug) keyset, oldest first.

    slug None means strictly after `since`; "" takes the whole bucket at it.
    A page whose mtime lies in the future waits for its time instead of
    dragging every cursor past the present.
    """
    where = ["updated_at >= ?", "updated_at <= ?"]
    params: list = [since, now]
    if slug is None:
        where.append("updated_at > ?")
        params.append(since)
    else:
        where.append("(updated_at > ? OR slug > ?)")
        params += [since, slug]
    if world_only:
        where.append("visibility != 'private'")
    sql = ("SELECT slug, title, updated_at FROM pages WHERE " + " AND ".join(where) +
           f" ORDER BY updated_at, slug LIMIT {PAGE_CAP + 1}")
    return db.execute(sql, params).fetchall()


def page_item(row) -> dict:
    return {"slug": row["slug"], "source_id": SOURCE_ID, "title": row["title"] or row["slug"],
            "updated_at": row["updated_at"]}


def page_cost(row) -> int:
    return estimate_tokens(f"{row['title'] or row['slug']} {row['slug']}")


def fact_cost(row) -> int:
    return estimate_tokens(row["fact"])


@dataclass
class PagesDelivery:
    rows: list = field(default_factory=list)
    pending: bool = False
    used: int = 0
    dropped: int = 0


def pack_pages(page_rows: list, budget: int | None) -> PagesDelivery:
    """≤50 pages, oldest first; under a budget the greedy prefix that fits (the
    facts get what is left)."""
    pages = page_rows[:PAGE_CAP]
    d = PagesDelivery(pages)
    if budget is not None:
        d.rows, d.used = pack_greedy(pages, [page_cost(r) for r in pages], budget)
        d.dropped = len(pages) - len(d.rows)
    d.pending = len(page_rows) > len(d.rows)
    return d


def pages_key(time: str, slug: str | None) -> tuple:
    # a NULL slug means "strictly after the bucket at `time`", so it sorts last
    return (time, "\U0010ffff" if slug is None else slug)
