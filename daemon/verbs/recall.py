"""recall: the facts arm and the page-search arm (docs/protocol.md §3.1)."""

from __future__ import annotations

from ...indexer.embeddings.search_modes import degraded_fields
from ..protocol.params import clamp_limit
from ...indexer.vault.timestamps import iso
from ..protocol.budget import budget_of, estimate_tokens, pack_greedy
from ..protocol.caller import Caller
from ..protocol.version import PROTOCOL_VERSION
from ..protocol.limits import RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX
from ..protocol.timeparse import parse_since_lenient
from ..stores.engine import Engine


def fact_projection(row) -> dict:
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


def _scope(engine: Engine, args: dict, caller: Caller):
    """The facts arm's one filter by precedence (docs/protocol.md §3.1): (where, params, order),
    or None when `since` does not parse (an empty arm, not an error)."""
    entity = (args.get("entity") or "").strip()
    if entity:
        return ["entity_slug = ?"], [engine.canonical_entity(entity, caller)], "valid_from DESC, id DESC"
    session = args.get("session_id")
    if session:
        return ["source_session = ?"], [session], "created_at DESC, id DESC"
    since = args.get("since")
    if since:
        ts = parse_since_lenient(since)
        if ts is None:
            return None
        return ["valid_from >= ?"], [iso(ts)], "valid_from DESC, id DESC"
    # valid_from is never null in this store, so the ordering can use its index
    return [], [], "valid_from DESC, id DESC"


def facts_arm(engine: Engine, args: dict, caller: Caller, limit: int) -> list:
    facts = engine.facts
    active_only = args.get("include_expired") is not True
    world_only = caller.remote
    if args.get("supersessions") is True:
        # the audit log keeps its order, query or not
        where, params = ["superseded_by IS NOT NULL"], []
        since = args.get("since")
        if since:
            ts = parse_since_lenient(since)
            if ts is None:
                return []
            where.append("COALESCE(expired_at, valid_until) >= ?")
            params.append(iso(ts))
        return facts.query(where, params, "COALESCE(expired_at, valid_until) DESC, id DESC", limit,
                           active_only=False, world_only=world_only)
    scope = _scope(engine, args, caller)
    if scope is None:
        return []
    where, params, order = scope
    grep = args.get("grep")
    if grep:
        # over every fact in scope, before the limit (not the newest `limit` only)
        where, params = [*where, "contains_ci(fact, ?)"], [*params, grep]
    query = (args.get("query") or "").strip()
    if query:
        return engine.search_facts(query, where, params, limit, active_only=active_only, world_only=world_only)
    return facts.query(where, params, order, limit, active_only=active_only, world_only=world_only)


def _hide_private_successors(engine: Engine, facts: list[dict]) -> None:
    """A world fact replaced by a private one shows no successor to remote callers (docs/protocol.md §4.8)."""
    hidden: dict[int, bool] = {}
    for f in facts:
        succ = f["superseded_by"]
        if succ is None:
            continue
        if succ not in hidden:
            row = engine.facts.get(succ)
            hidden[succ] = row is None or row["visibility"] != "world"
        if hidden[succ]:
            f["superseded_by"] = None


def recall(engine: Engine, args: dict, caller: Caller) -> dict:
    limit = clamp_limit(args.get("limit"), RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX)
    query = (args.get("query") or "").strip()
    results = None
    degraded_cause = None
    if query:
        # both arms rank by the query's vector: the model starts now, and the page arm (whose
        # keyword lookups come before its vector step) runs first, so they overlap
        engine.prefetch_embedding(query)
        results, degraded_cause = engine.search_pages(query, limit, caller)
    rows = facts_arm(engine, args, caller, limit)
    facts = [fact_projection(r) for r in rows]
    if caller.remote:
        _hide_private_successors(engine, facts)

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
        engine.note_retrieved([r["slug"] for r in results])
    if budget is not None:
        body["budget_tokens"] = budget
        body["budget_used"] = used
        body["dropped_count"] = dropped
    if args.get("include_pending") is True:
        body["pending_consolidation_count"] = 0
    body["protocol_version"] = PROTOCOL_VERSION
    return body
