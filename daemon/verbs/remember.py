"""remember: save one attributed fact (docs/protocol.md §3.2)."""

from __future__ import annotations

from ..protocol.caller import IDEMPOTENCY_META, Caller
from ..protocol.errors import InvalidParams, ProvenanceRequired
from ..protocol.version import PROTOCOL_VERSION
from ..protocol.limits import MAX_PROVENANCE_CHARS
from ..protocol.timeparse import parse_ttl
from ..stores.engine import Engine
from . import steps
from ..stores.fact_specifics import differ_in_specifics
from ..stores.fact_scope import normalize_text
from ..stores.facts import Fact, FactScope, Order
from ...indexer.vault.visibility import Viewer
from .cursors import client_of

# cosine at or above which two facts about one entity are the same claim
DEDUP_THRESHOLD = 0.95
# an idempotency key is a client's name for one call, not a document
MAX_CALL_KEY_CHARS = 200


def remember(engine: Engine, args: dict, caller: Caller) -> dict:
    fact = args["fact"].strip()
    if not fact:
        raise InvalidParams(
            "fact is empty.",
            "Pass the claim to save as `fact`, one sentence, e.g. \"Alice prefers morning meetings\".",
        )
    provenance = args["provenance"].strip()
    if not provenance:
        raise ProvenanceRequired(
            "provenance is blank: every fact needs to say where it came from.",
            'Pass provenance as short free text naming the origin, e.g. "conversation 2026-06-12" '
            'or "user said in chat".',
        )
    if len(provenance) > MAX_PROVENANCE_CHARS:
        raise InvalidParams(
            f"provenance is {len(provenance)} characters; the limit is {MAX_PROVENANCE_CHARS}.",
            "Shorten provenance to a pointer at the origin (a date, a conversation, a file name) "
            "and put the detail in the fact itself.",
        )
    kind = args.get("kind") or "fact"
    visibility = args.get("visibility") or "world"
    valid_until = parse_ttl(args.get("ttl"))
    entity = (args.get("entity") or "").strip()
    entity_slug = steps.canonical_entity(engine, entity, caller) if entity else None
    # session_id is declared (docs/protocol.md §1.4 typed it); an empty one means none
    session = args.get("session_id")
    session = session if isinstance(session, str) and session else None

    call_key = _call_key(caller)

    if args.get("dry_run") is True:
        return {
            "dry_run": True,
            "action": "remember",
            "fact": {"fact": fact, "kind": kind, "entity_slug": entity_slug, "visibility": visibility,
                     "provenance": provenance, "valid_until": valid_until},
            "protocol_version": PROTOCOL_VERSION,
        }

    # the model runs for this call only where dedup compares (_dedup); the new fact's vector is
    # stored after the answer (steps.keep_fact_vector)
    with engine.facts.exclusive():
        if call_key is not None:
            # the key is scoped to this caller's namespace (`_call_key`): what it finds, this
            # caller wrote, so it is found whatever its visibility
            done = engine.facts.by_call_key(call_key, Viewer.owner())
            if done is not None:
                return _replay(engine, done, fact)
        verdict = _dedup(engine, fact, kind, entity_slug, caller)
        if verdict and verdict[0] == "duplicate":
            existing = verdict[1]
            return _response(existing["id"], "duplicate", entity_slug, existing["valid_until"], verdict[2])
        supersede = verdict[1]["id"] if verdict and verdict[0] == "superseded" else None
        fid = engine.facts.insert(
            fact=fact, kind=kind, entity_slug=entity_slug, visibility=visibility, source=provenance,
            valid_until=valid_until, source_session=session, supersede=supersede, call_key=call_key,
        )
        degraded = verdict[2] if verdict else steps.dedup_degraded(engine)
        steps.keep_fact_vector(engine, fid, fact)
    return _response(fid, "superseded" if supersede else "inserted", entity_slug, valid_until, degraded)


def _call_key(caller: Caller) -> str | None:
    """The call's idempotency key, scoped to its caller's namespace, or None.

    Scoped, so that two clients that each count their calls 1, 2, 3 never
    meet: a key only ever finds a fact its own caller wrote.
    """
    key = caller.idempotency_key
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_CALL_KEY_CHARS:
        raise InvalidParams(
            f"_meta {IDEMPOTENCY_META} must be a non-empty string of at most {MAX_CALL_KEY_CHARS} characters.",
            "Send one fresh key per logical call (a UUID does) and the same key again only when retrying "
            "that call; or leave it out.",
        )
    return f"{client_of(caller)} {key.strip()}"


def _replay(engine: Engine, row: Fact, fact: str) -> dict:
    """The answer the call with this key got the first time it ran."""
    if normalize_text(row.fact) != normalize_text(fact):
        raise InvalidParams(
            f"this idempotency key already saved a different fact (#{row['id']}).",
            f"Send a new _meta {IDEMPOTENCY_META} for a new fact; reuse a key only to retry the same call.",
        )
    status = "superseded" if engine.facts.supersedes(row.id, Viewer.owner()) else "inserted"
    return _response(row.id, status, row.entity_slug, row.valid_until, steps.dedup_degraded(engine))


def _dedup(engine: Engine, fact: str, kind: str, entity_slug: str | None, caller: Caller):
    """('duplicate', row, degraded) / ('superseded', row, degraded) / None.

    A remote caller is only ever matched against world facts: a duplicate
    answer names the matched fact's id, and a superseded one expires it.
    """
    if entity_slug is None:
        return None
    same = next(iter(engine.facts.listed(FactScope(entity=entity_slug, same_text=fact, order=Order.ID),
                                         caller.viewer, 1)), None)
    degraded = steps.dedup_degraded(engine)
    if same is not None:
        return ("duplicate", same, degraded)  # an exact match needs no embedding
    # None without a model, or when every candidate differs in a specific (then no cosine could
    # merge them: the nearest would be kept apart below), so the model is not waited for
    similar = steps.fact_similarity(engine, entity_slug, fact, caller.viewer,
                                    worth_comparing=lambda rows: _may_merge(rows, fact))
    if similar is not None and similar[1] >= DEDUP_THRESHOLD:
        row = similar[0]
        if differ_in_specifics(row.fact, fact):
            return None  # another date, amount or name: another fact, however alike the sentences
        if row["kind"] == kind:
            return ("superseded", row, degraded)
        return ("duplicate", row, degraded)
    return None


def _may_merge(candidates, fact: str) -> bool:
    """Whether some candidate could be the same claim: one that does not differ in a specific."""
    return any(not differ_in_specifics(row["fact"], fact) for row in candidates)


def _response(fid: int, status: str, entity_slug, valid_until, degraded: bool) -> dict:
    text = {
        "inserted": f"remembered as fact #{fid}",
        "duplicate": f"already knew this — kept fact #{fid}",
        "superseded": f"updated — fact #{fid} supersedes the previous version",
    }[status]
    body = {
        "id": str(fid),
        "status": status,
        "status_text": text,
        "entity_slug": entity_slug,
        "valid_until": valid_until,
    }
    if degraded:
        body["degraded_dedup"] = True
    body["protocol_version"] = PROTOCOL_VERSION
    return body
