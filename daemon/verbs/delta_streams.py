"""delta's two streams — pages by (updated_at, slug), facts by (created_at, id) —
read after a keyset, packed under a budget, and the cursors that resume them.

A session keeps one keyset per stream, so each resumes exactly where delivery
stopped. A stateless caller has a single (since, slug) to pass back; when the
facts stream has more than one wake can carry, the two streams are packed as
one, merged by time, so that a single cursor still covers both.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from ...indexer.timestamps import iso
from ..protocol.budget import estimate_tokens, pack_greedy
from ..protocol.timeparse import parse_iso

PAGE_CAP = 50
FACT_CAP = 50
SOURCE_ID = "default"
_ONE_MS = _dt.timedelta(milliseconds=1)


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


def fetch_facts(facts, since: str, fid: int | None, world_only: bool) -> list:
    """Up to 51 active facts recorded after the (created_at, id) keyset, oldest first."""
    if fid is None:
        where, params = ["created_at > ?"], [since]
    else:
        where, params = ["created_at >= ?", "(created_at > ? OR id > ?)"], [since, since, fid]
    return facts.query(where, params, "created_at ASC, id ASC", FACT_CAP + 1, world_only=world_only)


def page_item(row) -> dict:
    return {"slug": row["slug"], "source_id": SOURCE_ID, "title": row["title"] or row["slug"],
            "updated_at": row["updated_at"]}


def page_cost(row) -> int:
    return estimate_tokens(f"{row['title'] or row['slug']} {row['slug']}")


def fact_cost(row) -> int:
    return estimate_tokens(row["fact"])


@dataclass
class Delivery:
    page_rows: list = field(default_factory=list)
    fact_rows: list = field(default_factory=list)
    pages_pending: bool = False
    facts_pending: bool = False
    used: int = 0
    dropped: int = 0


def pack_separate(page_rows: list, fact_rows: list, budget: int | None) -> Delivery:
    """The protocol's packing: ≤50 of each, pages first, the remainder to facts."""
    pages, facts = page_rows[:PAGE_CAP], fact_rows[:FACT_CAP]
    d = Delivery(pages, facts)
    if budget is not None:
        d.page_rows, d.used = pack_greedy(pages, [page_cost(r) for r in pages], budget)
        remainder = budget - d.used
        d.fact_rows = []
        if remainder > 0:
            d.fact_rows, used_f = pack_greedy(facts, [fact_cost(r) for r in facts], remainder)
            d.used += used_f
        d.dropped = (len(pages) - len(d.page_rows)) + (len(facts) - len(d.fact_rows))
    d.pages_pending = len(page_rows) > len(d.page_rows)
    d.facts_pending = len(fact_rows) > len(d.fact_rows)
    return d


def _key(kind: str, row) -> tuple:
    # facts sort before pages recorded in the same millisecond
    if kind == "fact":
        return (row["created_at"], 0, row["id"])
    return (row["updated_at"], 1, row["slug"])


def pack_merged(page_rows: list, fact_rows: list, budget: int | None) -> tuple[Delivery, tuple | None]:
    """Both streams as one, oldest first, cut where either stream's cap runs out.

    Returns the delivery and the merged key of the last delivered item (None
    when nothing was delivered).
    """
    seq = sorted([("page", r) for r in page_rows[:PAGE_CAP]] + [("fact", r) for r in fact_rows[:FACT_CAP]],
                 key=lambda kr: _key(*kr))
    # the 51st row of a stream is not delivered, so nothing after it may be
    stops = [_key("page", page_rows[PAGE_CAP])] if len(page_rows) > PAGE_CAP else []
    if len(fact_rows) > FACT_CAP:
        stops.append(_key("fact", fact_rows[FACT_CAP]))
    if stops:
        seq = [kr for kr in seq if _key(*kr) < min(stops)]
    d = Delivery()
    kept = seq
    if budget is not None:
        kept, d.used = pack_greedy(seq, [page_cost(r) if k == "page" else fact_cost(r) for k, r in seq], budget)
        d.dropped = len(seq) - len(kept)
    d.page_rows = [r for k, r in kept if k == "page"]
    d.fact_rows = [r for k, r in kept if k == "fact"]
    d.pages_pending = len(page_rows) > len(d.page_rows)
    d.facts_pending = len(fact_rows) > len(d.fact_rows)
    return d, (_key(*kept[-1]) if kept else None)


def shift_ms(ts: str, ms: int) -> str:
    return iso(parse_iso(ts) + ms * _ONE_MS)  # type: ignore[return-value]


def merged_cursor(last: tuple | None, since: str, slug: str | None) -> dict:
    """The single (since, slug) that resumes a merged delivery, given its last item."""
    if last is None:
        return {"since": since, "slug": slug or ""}
    time, kind, key = last
    if kind == 1:
        return {"since": time, "slug": key}
    # ended on a fact: step back 1 ms so the rest of its millisecond comes again
    # (a few facts repeat; none is skipped) — unless that would not move at all
    back = shift_ms(time, -1)
    return {"since": back if back > since else time, "slug": ""}


def pages_key(time: str, slug: str | None) -> tuple:
    # a NULL slug means "strictly after the bucket at `time`", so it sorts last
    return (time, "\U0010ffff" if slug is None else slug)


def facts_key(time: str, fid: int | None) -> tuple:
    return (time, float("inf") if fid is None else fid)


def safe_cursor(d: Delivery, since: str, slug: str | None, facts_since: str, facts_id: int | None) -> dict:
    """A session wake's next_cursor: the page keyset, pulled back while facts remain,
    so a caller that switches to stateless resumes without a gap."""
    if d.page_rows:
        since, slug = d.page_rows[-1]["updated_at"], d.page_rows[-1]["slug"]
    if not d.facts_pending:
        return {"since": since, "slug": slug or ""}
    if d.fact_rows:
        floor = shift_ms(d.fact_rows[-1]["created_at"], -1)
    else:
        floor = shift_ms(facts_since, -1) if facts_id is not None else facts_since
    if not d.pages_pending:
        return {"since": floor, "slug": ""}
    page_floor = shift_ms(since, -1) if slug else since
    return {"since": min(floor, page_floor), "slug": ""}
