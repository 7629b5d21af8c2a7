"""delta: what changed since a cursor (docs/protocol.md §3.7).

Two streams, each read oldest first with a keyset so nothing is skipped and
nothing livelocks on a shared timestamp: pages by (updated_at, slug), facts
by (created_at, id). Delivery is at-least-once: a session cursor moves only
past what was actually delivered. Unlike the reference, private pages stay
hidden from the world tier, and a wake with more than 50 new facts says
`has_more` and delivers the rest next time instead of dropping them.
"""

from __future__ import annotations

import datetime as _dt
import logging

from .cards import resolve, threads_for
from .cursors import Cursor, client_of, store_for
from .delta_streams import Delivery, facts_key, fetch_facts, fetch_pages, merged_cursor, pack_merged, pack_separate, page_item, pages_key, safe_cursor
from ...indexer.timestamps import iso, utcnow
from ..protocol.budget import budget_of
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams
from ..protocol.version import PROTOCOL_VERSION
from .injectable_text import delta_text
from ..protocol.timeparse import ACCEPTED_FORMS, parse_since_strict
from .context_pack import fact_item, split_entities, world_only_for

log = logging.getLogger("brain.delta")

# a zero-delivery wake parks the cursor a little in the past, so a page being
# written at this moment is still after it
IN_FLIGHT_LAG = _dt.timedelta(seconds=2)


def _no_anchor() -> InvalidParams:
    return InvalidParams(
        "delta needs a starting point: pass since, or a session_id.",
        f"Pass since as {ACCEPTED_FORMS} (e.g. \"1970-01-01T00:00:00Z\" for everything), or pass "
        "session_id: the first call with a new session_id sets its cursor, later calls return "
        "what changed since the previous one.",
    )


def _threads(engine, names: list[str], since: str, world_only: bool) -> list[dict]:
    out: list[dict] = []
    seen: set = set()
    for name in names:
        try:
            rows = resolve(engine.page_db, name, world_only)
            if not rows:
                continue
            for t in threads_for(engine, rows[0], world_only):
                key = (t["kind"], t["text"], t["date"])
                if t["date"] and t["date"] > since and key not in seen:
                    seen.add(key)
                    out.append(t)
        except Exception:  # one broken entity never sinks the wake
            log.warning("delta: threads for %r failed", name, exc_info=True)
    return out


def delta(engine, args: dict, caller: Caller) -> dict:
    explicit = parse_since_strict(args.get("since"))
    session = (args.get("session_id") or "").strip() or None
    since_slug = args.get("since_slug")
    world_only = world_only_for(args, caller)
    budget = budget_of(args.get("budget_tokens"))
    if explicit is None and session is None:
        raise _no_anchor()

    store = store_for(engine) if session else None
    client = client_of(caller)
    stored = store.get(client, session) if store else None
    now_dt = utcnow()
    now = iso(now_dt)

    if explicit is None and stored is None:
        # first wake of this session: establish the cursor, deliver nothing
        store.gc()
        store.put(client, session, Cursor(now, None, now, None))
        return _first_wake(now, budget)

    if explicit is not None:
        since = iso(explicit)
        slug = since_slug  # an explicit since never pairs with the session's stored slug
        facts_since, facts_id = since, None
    else:
        since = stored.since
        slug = since_slug if since_slug is not None else stored.slug
        facts_since, facts_id = stored.facts_since, stored.facts_id

    page_rows = fetch_pages(engine.page_db, since, slug, world_only, now)
    fact_rows = fetch_facts(engine.facts, facts_since, facts_id, world_only)
    d = pack_separate(page_rows, fact_rows, budget)
    if store is None and d.facts_pending:
        # one cursor for two streams: pack them as one, by time
        d, last = pack_merged(page_rows, fact_rows, budget)
        next_cursor = merged_cursor(last, since, slug)
    else:
        next_cursor = safe_cursor(d, since, slug, facts_since, facts_id)
    if store is not None:
        _advance(store, client, session, stored, now_dt, d, (since, slug), (facts_since, facts_id))
    pages = [page_item(r) for r in d.page_rows]
    facts = [fact_item(r, r["confidence"]) for r in d.fact_rows]

    threads = _threads(engine, split_entities(args.get("entities")), since, world_only)
    body: dict = {
        "since": since,
        "pages": pages,
        "facts": facts,
        "threads": threads,
        "text": delta_text(since, pages, facts, threads),
        "has_more": d.pages_pending or d.facts_pending,
        "next_cursor": next_cursor,
    }
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = d.used
        body["dropped_count"] = d.dropped
    body["protocol_version"] = PROTOCOL_VERSION
    return body


def _advance(store, client: str, session: str, stored: Cursor | None, now_dt: _dt.datetime,
             d: Delivery, page_from: tuple, facts_from: tuple) -> None:
    """Move each of the session's keysets past what was delivered, and no further."""
    parked = iso(now_dt - IN_FLIGHT_LAG)
    if d.page_rows:
        page_cur = (d.page_rows[-1]["updated_at"], d.page_rows[-1]["slug"])
    elif d.pages_pending:
        page_cur = page_from  # nothing delivered but something waits: stay put
    else:
        page_cur = (parked, "")
        if stored is not None and pages_key(stored.since, stored.slug) > pages_key(*page_cur):
            page_cur = (stored.since, stored.slug)
    if d.fact_rows:
        facts_cur = (d.fact_rows[-1]["created_at"], d.fact_rows[-1]["id"])
    elif d.facts_pending:
        facts_cur = facts_from
    else:
        facts_cur = (parked, None)
        if stored is not None and facts_key(stored.facts_since, stored.facts_id) > facts_key(*facts_cur):
            facts_cur = (stored.facts_since, stored.facts_id)
    store.put(client, session, Cursor(page_cur[0], page_cur[1], facts_cur[0], facts_cur[1]))


def _first_wake(now: str, budget: int | None) -> dict:
    body: dict = {
        "since": now,
        "pages": [],
        "facts": [],
        "threads": [],
        "text": "",
        "has_more": False,
        "next_cursor": {"since": now, "slug": ""},
    }
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = 0
        body["dropped_count"] = 0
    body["protocol_version"] = PROTOCOL_VERSION
    return body
