"""recall: the facts arm and the page-search arm (docs/protocol.md §3.1)."""

from __future__ import annotations

from ...indexer.embeddings.search_modes import degraded_fields
from ..protocol.params import clamp_limit
from ...indexer.vault.timestamps import iso
from ..protocol.budget import budget_of, estimate_tokens, pack_greedy
from ..protocol.caller import Caller
from ..stores.engine import Engine
from . import steps
from ..protocol.version import PROTOCOL_VERSION
from ..protocol.limits import RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX
from ..protocol.timeparse import parse_since_lenient
from ..stores.facts import Fact, FactScope, Order


def fact_projection(row: Fact) -> dict:
    """The legacy fact shape plus fact_id and provenance, every key present."""
    return {
        "id": row["id"],
        "fact_id": str(row["id"]),
        "fact": row["fact"],
        "kind": row["kind"],
        "entity_slug": row["entity_slug"],
        "provenance": row["source"],
        "source": row["source"],
        "visibility": row["visibility"],
        "notability": row["notability"],
        "confidence": row["confidence"],
        "valid_from": row["valid_from"],
        "valid_until": row["valid_until"],
        "expired_at": row["expired_at"],
        "superseded_by": row["superseded_by"],
        "consolidated_at": None,
        "consolidated_into": None,
        "source_session": row["source_session"],
        "context": row["context"],
        "created_at": row["created_at"],
    }


def _scope(engine: Engine, args: dict, caller: Caller) -> FactScope | None:
    """The facts arm's one filter by precedence (docs/protocol.md §3.1), or None when `since`
    does not parse (an empty arm, not an error)."""
    include_expired = args.get("include_expired") is True
    grep = args.get("grep") or None  # over every fact in scope, before the limit
    entity = (args.get("entity") or "").strip()
    if entity:
        return FactScope(entity=steps.canonical_entity(engine, entity, caller), grep=grep,
                         include_expired=include_expired, order=Order.NEWEST_VALID)
    session = args.get("session_id")
    if session:
        return FactScope(session=session, grep=grep, include_expired=include_expired, order=Order.NEWEST_SAVED)
    since = args.get("since")
    if since:
        ts = parse_since_lenient(since)
        if ts is None:
            return None
        return FactScope(valid_since=iso(ts), grep=grep, include_expired=include_expired, order=Order.NEWEST_VALID)
    return FactScope(grep=grep, include_expired=include_expired, order=Order.NEWEST_VALID)


def _supersessions(args: dict) -> FactScope | None:
    """The audit log of replaced facts, in its own order, query or not; None when `since` does not parse."""
    since = args.get("since")
    ended_since = None
    if since:
        ts = parse_since_lenient(since)
        if ts is None:
            return None
        ended_since = iso(ts)
    return FactScope(replacing_only=True, ended_since=ended_since, include_expired=True, order=Order.LATEST_ENDED)


def facts_arm(engine: Engine, args: dict, caller: Caller, limit: int) -> list[Fact]:
    facts = engine.facts
    if args.get("supersessions") is True:
        audit = _supersessions(args)
        return [] if audit is None else facts.listed(audit, caller.viewer, limit)
    scope = _scope(engine, args, caller)
    if scope is None:
        return []
    query = (args.get("query") or "").strip()
    if query:
        return facts.ranked(query, scope, caller.viewer, limit)
    return facts.listed(scope, caller.viewer, limit)


def _hide_private_successors(engine: Engine, facts: list[dict], caller: Caller) -> None:
    """A world fact replaced by a private one shows no successor to remote callers (docs/protocol.md §4.8)."""
    hidden: dict[int, bool] = {}
    for f in facts:
        succ = f["superseded_by"]
        if succ is None:
            continue
        if succ not in hidden:
            hidden[succ] = engine.facts.get(succ, caller.viewer) is None
        if hidden[succ]:
            f["superseded_by"] = None


def recall(engine: Engine, args: dict, caller: Caller) -> dict:
    limit = clamp_limit(args.get("limit"), RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX)
    query = (args.get("query") or "").strip()
    results = None
    degraded_cause = None
    if query:
        # both arms rank by the query's one vector: a prefetch thread embeds it (over MCP it
        # started when the call was read) while the page arm does its keyword lookups; the
        # page arm's vector step and then the facts arm use it. The arms run in turn, here: run
        # side by side they fought over the interpreter lock and took longer (docs/architecture.md,
        # "On the hot path")
        steps.prefetch_embedding(engine, query, query=True)
        results, degraded_cause = steps.find_pages(engine, query, limit, caller)
    rows = facts_arm(engine, args, caller, limit)
    facts = [fact_projection(r) for r in rows]
    if caller.remote:
        _hide_private_successors(engine, facts, caller)

    body: dict = {}

    budget = budget_of(args.get("budget_tokens"))
    dropped = 0
    used = 0
    if budget is not None:
        n_facts, n_results = len(facts), len(results or [])
        facts, used = pack_greedy(facts, [estimate_tokens(f["fact"]) for f in facts], budget)
        if results is not None:
            remainder = budget - used
            if remainder > 0:
                costs = [estimate_tokens(r.get("title")) + estimate_tokens(r.get("chunk")) for r in results]
                results, used_r = pack_greedy(results, costs, remainder)
                used += used_r
            else:
                results = []
        dropped = (n_facts - len(facts)) + (n_results - len(results or []))

    body["facts"] = facts
    body["total"] = len(facts)
    if results is not None:
        body["results"] = results
        body.update(degraded_fields(degraded_cause))
        steps.note_retrieved(engine, [r["slug"] for r in results])
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = used
        body["dropped_count"] = dropped
    if args.get("include_pending") is True:
        body["pending_consolidation_count"] = 0
    body["protocol_version"] = PROTOCOL_VERSION
    return body
