"""delta's pages arm — pages by (updated_at, slug), oldest first, read after a
keyset and packed under a budget — and the cost of an item of either arm (the
facts arm is delta_facts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...indexer.vault.visibility import Viewer
from ..protocol.budget import estimate_tokens, pack_greedy
from ..stores.pages import ChangedPage, PagesStore

PAGE_CAP = 50
FACT_CAP = 50
SOURCE_ID = "default"


def fetch_pages(pages: PagesStore, since: str, slug: str | None, world_only: bool, now: str) -> list[ChangedPage]:
    """Up to 51 pages after the (since, slug) keyset, oldest first.

    slug None means strictly after `since`; "" takes the whole bucket at it.
    A page whose mtime lies in the future waits for its time instead of
    dragging every cursor past the present.
    """
    viewer = Viewer.world() if world_only else Viewer.owner()
    return pages.pages_changed_since(since, slug, now, viewer, PAGE_CAP + 1)


def page_item(page: ChangedPage) -> dict:
    return {"slug": page.slug, "source_id": SOURCE_ID, "title": page.title or page.slug,
            "updated_at": page.updated_at}


def page_cost(page: ChangedPage) -> int:
    return estimate_tokens(f"{page.title or page.slug} {page.slug}")


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
