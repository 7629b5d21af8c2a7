"""delta: what changed since a cursor (docs/protocol.md §3.7).

Two arms, each with its own limit, order and keyset, so nothing is skipped
and nothing livelocks on a shared timestamp: pages by (updated_at, slug),
oldest first, 50 a call; facts by (created_at, id), newest first, 50 a call
(delta_facts.py). A session cursor moves only past what was delivered. Unlike
the reference, private pages stay hidden from the world tier, and the facts
an overflowing wake could not show are not dropped: `has_more` says so, and
the next calls (the session's, or any passing back `facts_cursor`) page back
through them.
"""

from __future__ import annotations

import datetime as _dt
import logging

from .cards import resolve, threads_for
from .cursors import cursor_namespace
from ..stores.cursors import Cursor, CursorStore
from .delta_facts import BACKLOG_SUFFIX, FactsDelivery, FactsWindow, deliver_facts, window_from_token
from .delta_streams import PagesDelivery, fetch_pages, pack_pages, page_item, pages_key
from ...indexer.vault.timestamps import iso
from ..protocol.budget import budget_of
from ..protocol.caller import Caller
from ...indexer.vault.visibility import Viewer
from ..protocol.errors import InvalidParams
from ..protocol.version import PROTOCOL_VERSION
from .injectable_text import delta_text
from ..protocol.timeparse import ACCEPTED_FORMS, parse_since_strict
from ..stores.engine import Engine
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


def _threads(engine: Engine, names: list[str], since: str, world_only: bool) -> list[dict]:
    out: list[dict] = []
    seen: set = set()
    for name in names:
        try:
            rows = resolve(engine, name, world_only)
            if not rows:
                continue
            for t in threads_for(engine, rows[0], world_only):
                key = (t["kind"], t["text"], t["date"], t.get("page"))
                if t["date"] and t["date"] > since and key not in seen:
                    seen.add(key)
                    out.append(t)
        except Exception:  # one broken entity never sinks the wake
            log.warning("delta: threads for %r failed", name, exc_info=True)
    return out


def delta(engine: Engine, args: dict, caller: Caller) -> dict:
    explicit = parse_since_strict(args.get("since"))
    session: str = (args.get("session_id") or "").strip()  # "" when there is none
    since_slug = args.get("since_slug")
    world_only = world_only_for(args, caller)
    budget = budget_of(args.get("budget_tokens"))
    if explicit is None and not session:
        raise _no_anchor()

    store = engine.cursors if session else None
    client = cursor_namespace(caller)
    stored = store.get(client, session) if store else None
    now_dt = engine.clock.now()
    now = iso(now_dt)

    if explicit is None and stored is None:
        # first wake of this session: establish the cursor, deliver nothing
        assert store is not None  # without since, a session_id was required above, and it has a store
        store.gc()
        store.put(client, session, Cursor(now, None, now, None))
        return _first_wake(now, budget)

    if explicit is not None:
        since = iso(explicit)
        slug = since_slug  # an explicit since never pairs with the session's stored slug
        window = FactsWindow((since, None))
        had_backlog = _stored_backlog(store, client, session) if store else None
    else:
        assert stored is not None and store is not None  # without since and a stored cursor, the first wake returned above
        since = stored.since
        slug = since_slug if since_slug is not None else stored.slug
        had_backlog = _stored_backlog(store, client, session)
        window = FactsWindow((stored.facts_since, stored.facts_id), had_backlog)
    token = (args.get("facts_cursor") or "").strip()
    if token:
        window = window_from_token(token)

    pd = pack_pages(fetch_pages(engine.pages, since, slug, world_only, now), budget)
    left = None if budget is None else budget - pd.used
    fd = deliver_facts(engine.facts, window, Viewer(sees_private=not world_only), left)
    if pd.rows:
        next_cursor = {"since": pd.rows[-1].updated_at, "slug": pd.rows[-1].slug}
    else:
        next_cursor = {"since": since, "slug": slug or ""}
    if store is not None:
        _advance(store, client, session, stored, now_dt, pd, fd, (since, slug), had_backlog is not None)
    pages = [page_item(r) for r in pd.rows]
    facts = [fact_item(r, r.confidence) for r in fd.rows]

    threads = _threads(engine, split_entities(args.get("entities")), since, world_only)
    body: dict = {
        "since": since,
        "pages": pages,
        "facts": facts,
        "threads": threads,
        "text": delta_text(since, pages, facts, threads),
        "has_more": pd.pending or fd.pending,
        "next_cursor": next_cursor,
        "facts_cursor": fd.window.token(),
    }
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = pd.used + fd.used
        body["dropped_count"] = pd.dropped + fd.dropped
    body["protocol_version"] = PROTOCOL_VERSION
    return body


def _stored_backlog(store: CursorStore, client: str, session: str):
    row = store.get(client, session + BACKLOG_SUFFIX)
    if row is None or row.slug is None or row.facts_id is None:
        return None
    # the backlog row keeps its lower keyset in the facts fields, its upper in (since, slug)
    return (row.facts_since, row.facts_id if row.facts_id >= 0 else None), (row.since, int(row.slug))


def _advance(store: CursorStore, client: str, session: str, stored: Cursor | None, now_dt: _dt.datetime,
             pd: PagesDelivery, fd: FactsDelivery, page_from: tuple, had_backlog: bool) -> None:
    """Move the session past what was delivered, and no further."""
    parked = iso(now_dt - IN_FLIGHT_LAG)
    if pd.rows:
        page_cur = (pd.rows[-1].updated_at, pd.rows[-1].slug)
    elif pd.pending:
        page_cur = page_from  # nothing delivered but something waits: stay put
    else:
        page_cur = (parked, "")
        if stored is not None and pages_key(stored.since, stored.slug) > pages_key(*page_cur):
            page_cur = (stored.since, stored.slug)
    top = fd.window.top
    if not fd.rows and not fd.pending and parked > top[0]:
        top = (parked, None)  # nothing waits: park just behind now, for a fact being written at this moment
    store.put(client, session, Cursor(page_cur[0], page_cur[1], top[0], top[1]))
    backlog = fd.window.backlog
    if backlog is None and had_backlog:  # the backlog row is written only while there is one
        store.put(client, session + BACKLOG_SUFFIX, Cursor("", None, "", None))
    elif backlog is not None:
        (low_ts, low_id), (up_ts, up_id) = backlog
        store.put(client, session + BACKLOG_SUFFIX,
                  Cursor(up_ts, str(up_id), low_ts, -1 if low_id is None else low_id))


def _first_wake(now: str, budget: int | None) -> dict:
    body: dict = {
        "since": now,
        "pages": [],
        "facts": [],
        "threads": [],
        "text": "",
        "has_more": False,
        "next_cursor": {"since": now, "slug": ""},
        "facts_cursor": FactsWindow((now, None)).token(),
    }
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = 0
        body["dropped_count"] = 0
    body["protocol_version"] = PROTOCOL_VERSION
    return body
