"""context_pack: the session-start bundle (docs/protocol.md §3.6).

Cards for up to MAX_ENTITIES standing entities, then facts under one budget. The
reference fills the facts with whatever is recent brain-wide; here the facts
about the requested entities come first, then the session's (or the last
24 hours') hot facts, each group ranked by decayed confidence (§4.7).

No cache: every part is a few indexed lookups, and a cache is one more place
where a private fact could leak from one visibility tier into another.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math

from .cards import build_card, resolve
from ...indexer.vault.timestamps import iso, utcnow
from ..protocol.budget import budget_of, estimate_tokens, pack_greedy
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams
from ..protocol.timeparse import parse_iso
from ..protocol.version import PROTOCOL_VERSION
from .injectable_text import pack_text
from ..stores.facts import Fact, FactScope, FactsStore, Order
from ...indexer.vault.visibility import Viewer
from ..protocol.limits import MAX_ENTITIES
from ..protocol.timeparse import parse_since_strict
from ..stores.engine import Engine

log = logging.getLogger("brain.context_pack")

FACTS_PER_ENTITY = 5
ENTITY_FACTS_FETCH = 20
MAX_ENTITY_FACTS = 20
MAX_HOT_FACTS = 10
HOT_FETCH = 30
HALF_LIFE_DAYS = {"event": 7, "commitment": 90, "preference": 90, "belief": 365, "fact": 365}


def split_entities(value: str | None) -> list[str]:
    """Comma-separated names, trimmed, empties dropped, the first MAX_ENTITIES kept."""
    names = [n.strip() for n in (value or "").split(",")]
    return [n for n in names if n][:MAX_ENTITIES]


def world_only_for(args: dict, caller: Caller) -> bool:
    """include_private widens to private data only for the trusted local lane."""
    return not (args.get("include_private") is True and not caller.remote)


def decayed_confidence(row, now: _dt.datetime) -> float:
    """confidence × exp(−age/half-life), in [0, 1]; 0 once expired or past valid_until."""
    if row["expired_at"]:
        return 0.0
    try:
        # a hand-edited expiry that is not a date counts as none (the store keeps the row active too)
        if row["valid_until"] and parse_iso(row["valid_until"]) <= now:
            return 0.0
    except ValueError:
        pass
    try:
        age_days = max(0.0, (now - parse_iso(row["valid_from"])).total_seconds() / 86400)
    except ValueError:
        age_days = 0.0
    half_life = HALF_LIFE_DAYS.get(row["kind"], 365)
    value = float(row["confidence"]) * math.exp(-age_days / half_life)
    return min(1.0, max(0.0, value))


def fact_item(row, confidence: float) -> dict:
    """The pack/delta fact shape; fact_id lets an agent forget it."""
    return {
        "fact": row["fact"],
        "kind": row["kind"],
        "entity_slug": row["entity_slug"],
        "valid_from": row["valid_from"],
        "context": row["context"],
        "confidence": round(confidence, 3),
        "fact_id": str(row["id"]),
    }


def pack_card(card: dict) -> dict:
    e = card["entity"]
    return {
        "slug": e["slug"],
        "title": e["title"],
        "type": e["type"],
        "summary": card["summary"],
        "open_threads": card["open_threads"],
        "edges": card["edges"],
        "backlink_count": card["backlink_count"],
    }


def card_cost(card: dict) -> int:
    threads = " ".join(t["text"] for t in card["open_threads"])
    return estimate_tokens(f"{card['title']} {card['summary']} {threads}")


def hot_facts(facts: FactsStore, session_id: str | None, viewer: Viewer, limit: int) -> list[Fact]:
    """The session's latest facts; without a session or when it has none, the last day's."""
    if session_id:
        rows = facts.listed(FactScope(session=session_id, order=Order.NEWEST_SAVED), viewer, limit)
        if rows:
            return rows
    day_ago = iso(utcnow() - _dt.timedelta(days=1))
    return facts.listed(FactScope(saved_since=day_ago, order=Order.NEWEST_SAVED), viewer, limit)


def pack_facts(engine: Engine, slugs: list[str], session_id: str | None, world_only: bool) -> list[dict]:
    """Facts about the entities first, then hot facts; each group by decayed confidence."""
    now = engine.clock.now()
    facts = engine.facts
    viewer = Viewer(sees_private=not world_only)

    def ranked(rows):
        scored = [(decayed_confidence(r, now), r) for r in rows]
        # stable: newest first among equal scores
        scored.sort(key=lambda sr: (sr[1]["created_at"], sr[1]["id"]), reverse=True)
        scored.sort(key=lambda sr: sr[0], reverse=True)
        return scored

    about: list = []
    for slug in slugs:
        about.extend(ranked(facts.listed(FactScope(entity=slug), viewer, ENTITY_FACTS_FETCH))[:FACTS_PER_ENTITY])
    about = ranked([r for _, r in about])[:MAX_ENTITY_FACTS]
    seen = {r["id"] for _, r in about}
    hot = [r for r in hot_facts(facts, session_id, viewer, HOT_FETCH) if r["id"] not in seen]
    hot_ranked = ranked(hot)[:MAX_HOT_FACTS]
    return [fact_item(r, c) for c, r in about + hot_ranked]


def context_pack(engine: Engine, args: dict, caller: Caller) -> dict:
    names = split_entities(args["entities"])
    if not names:
        raise InvalidParams(
            "entities names no entity.",
            'Pass `entities` as a comma-separated string of names or slugs, e.g. '
            f'"people/me, Acme Corp" (at most {MAX_ENTITIES}).',
        )
    since = parse_since_strict(args.get("since"))
    since_iso = iso(since)
    world_only = world_only_for(args, caller)
    session_id = args.get("session_id") or None

    cards: list[dict] = []
    unresolved: list[str] = []
    seen: set[str] = set()
    for name in names:
        try:
            rows = resolve(engine, name, world_only)
            if not rows:
                unresolved.append(name)
                continue
            if rows[0].slug in seen:
                continue
            seen.add(rows[0].slug)
            cards.append(pack_card(build_card(engine, rows[0], world_only)))
        except Exception:  # one broken entity never sinks the pack
            log.warning("context_pack: card for %r failed", name, exc_info=True)
    facts = pack_facts(engine, [c["slug"] for c in cards], session_id, world_only)

    body: dict = {"entities": names}
    budget = budget_of(args.get("budget_tokens"))
    dropped = used = 0
    if budget is not None:
        n_cards, n_facts = len(cards), len(facts)
        cards, used = pack_greedy(cards, [card_cost(c) for c in cards], budget)
        remainder = budget - used
        if remainder > 0:
            facts, used_f = pack_greedy(facts, [estimate_tokens(f["fact"]) for f in facts], remainder)
            used += used_f
        else:
            facts = []
        dropped = (n_cards - len(cards)) + (n_facts - len(facts))

    threads = []
    for t in (t for c in cards for t in c["open_threads"]):
        # a task written on one page that links two of the entities is one thread, not two
        if t["date"] and (since_iso is None or t["date"] > since_iso) and t not in threads:
            threads.append(t)
    body["cards"] = cards
    body["open_threads"] = threads
    body["facts"] = facts
    body["text"] = pack_text(cards, threads, facts)
    if unresolved:
        body["unresolved"] = unresolved
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = used
        body["dropped_count"] = dropped
    body["protocol_version"] = PROTOCOL_VERSION
    return body
