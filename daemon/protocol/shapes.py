"""The response-shape registry: what every verb's answer must look like.

One declaration per verb (docs/protocol.md §5.4) plus the error envelope
(§1.3). Required fields are what the protocol freezes; every other field the
verbs send — the reference's legacy keys and our additive ones such as recall
results' `indexed_at` / `stale` — is declared too, so a present field with the
wrong type (or `null` where null is not allowed) is caught.

The schemas use a small subset of JSON Schema, checked by `validate()` the
way the conformance runner checks them: non-strict (extra keys are always
legal), `integer` means an integral number, `enum` skips null, `required`
counts a null as present, `properties` are checked only for keys present.

Why not `jsonschema` (installed with the MCP SDK): it fails a null against
an `enum`, which the runner's rule accepts, and its messages name schema
keywords rather than the answer's path (`facts.0.kind: expected …`), which
is what a conformance row shows. Bending it to both would take a custom
validator class about the size of the 60 lines below.
"""

from __future__ import annotations

from .errors import ERROR_CODES
from .version import PROTOCOL_VERSION
from .tools import KINDS, VERB_NAMES, VISIBILITIES

EVIDENCE = ["alias_hit", "exact_title_match", "high_vector_match", "keyword_exact", "weak_semantic"]
CREATE_SAFETY = ["exists", "probable", "unknown"]
REMEMBER_STATUS = ["inserted", "duplicate", "superseded"]
THREAD_KINDS = ["commitment", "recent_event"]
SYNTHESIS_STATUS = ["ok", "empty_answer", "not_json", "no_llm", "model_unusable", "llm_error",
                    "extractive_fallback"]


def _obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "required": list(required), "properties": properties}


def _arr(items: dict) -> dict:
    return {"type": "array", "items": items}


STR = {"type": "string"}
STR_OR_NULL = {"type": ["string", "null"]}
INT = {"type": "integer"}
INT_OR_NULL = {"type": ["integer", "null"]}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
VERSION = {"type": "integer", "const": PROTOCOL_VERSION}
KIND = {"type": "string", "enum": list(KINDS)}

# budget keys appear together, and only when a budget applied
BUDGET = {"budget_tokens": INT, "budget_used": INT, "dropped_count": INT}

THREAD = _obj({"kind": {"type": "string", "enum": THREAD_KINDS}, "text": STR, "date": STR_OR_NULL},
              ("kind", "text", "date"))

EDGE = _obj({"type": STR, "direction": {"type": "string", "enum": ["out", "in"]}, "slug": STR,
             "context": STR_OR_NULL}, ("type", "direction", "slug"))

RECALL_FACT = _obj({
    "id": INT,
    "fact_id": STR,
    "fact": STR,
    "kind": KIND,
    "entity_slug": STR_OR_NULL,
    "provenance": STR,
    "source": STR,
    "visibility": {"type": "string", "enum": list(VISIBILITIES)},
    "notability": {"type": "string", "enum": ["high", "medium", "low"]},
    "confidence": NUM,
    "valid_from": STR_OR_NULL,
    "valid_until": STR_OR_NULL,
    "expired_at": STR_OR_NULL,
    "superseded_by": INT_OR_NULL,
    "consolidated_at": STR_OR_NULL,
    "consolidated_into": INT_OR_NULL,
    "source_session": STR_OR_NULL,
    "context": STR_OR_NULL,
    "created_at": STR,
}, ("id", "fact", "kind", "fact_id", "provenance"))

RECALL_RESULT = _obj({
    "slug": STR,
    "title": STR_OR_NULL,
    "chunk": STR_OR_NULL,
    "evidence": {"type": "string", "enum": EVIDENCE},
    "create_safety": {"type": "string", "enum": CREATE_SAFETY},
    "provenance": STR,
    # ours: when the page was indexed, and whether the file changed since
    "indexed_at": STR,
    "stale": BOOL,
}, ("slug", "title", "evidence", "create_safety", "provenance"))

PACK_FACT = _obj({
    "fact": STR,
    "kind": KIND,
    "entity_slug": STR_OR_NULL,
    "valid_from": STR,
    "context": STR_OR_NULL,
    "confidence": NUM,
}, ("fact", "kind"))

RECALL = _obj({
    "facts": _arr(RECALL_FACT),
    "total": INT,
    "results": _arr(RECALL_RESULT),
    "search_degraded": STR,
    "search_degraded_cause": STR,
    **BUDGET,
    "pending_consolidation_count": INT,
    "protocol_version": VERSION,
}, ("facts", "total", "protocol_version"))

REMEMBER = _obj({
    "id": STR,
    "status": {"type": "string", "enum": REMEMBER_STATUS},
    "status_text": STR,
    "entity_slug": STR_OR_NULL,
    "valid_until": STR_OR_NULL,
    "degraded_dedup": BOOL,
    "protocol_version": VERSION,
}, ("id", "status", "status_text", "entity_slug", "valid_until", "protocol_version"))

CARD = _obj({
    "entity": _obj({"slug": STR, "title": STR, "type": STR_OR_NULL}, ("slug", "title", "type")),
    "aka": _arr(STR),
    "summary": STR,
    "last_touched": _obj({"updated_at": STR_OR_NULL, "last_retrieved_at": STR_OR_NULL,
                          "last_timeline_date": STR_OR_NULL},
                         ("updated_at", "last_retrieved_at", "last_timeline_date")),
    "open_threads": _arr(THREAD),
    "edges": _arr(EDGE),
    "backlink_count": INT,
    "active_fact_count": INT,
}, ("entity", "aka", "summary", "last_touched", "open_threads", "edges", "backlink_count",
    "active_fact_count"))

SUGGESTION = _obj({"slug": STR, "title": STR, "create_safety": {"type": "string", "enum": CREATE_SAFETY}},
                  ("slug", "title", "create_safety"))

ENTITY = _obj({
    "found": BOOL,
    "latency_ms": INT,
    "card": CARD,
    "suggestions": _arr(SUGGESTION),
    "protocol_version": VERSION,
}, ("protocol_version", "found", "latency_ms"))

SYNTHESIZE = _obj({
    "answer": STR,
    "sources": _arr(STR),
    "gaps": _arr(STR),
    "cost": _obj({"model": STR, "input_tokens": INT_OR_NULL, "output_tokens": INT_OR_NULL,
                  "usd_estimate": {"type": ["number", "null"]}},
                 ("model", "input_tokens", "output_tokens", "usd_estimate")),
    "synthesis_status": {"type": "string", "enum": SYNTHESIS_STATUS},
    "pages_gathered": INT,
    "takes_gathered": INT,
    "facts_gathered": INT,
    "warnings": _arr(STR),
    "protocol_version": VERSION,
}, ("answer", "sources", "cost", "protocol_version"))

FORGET = _obj({
    "id": STR,
    "expired": BOOL,
    "reason": STR_OR_NULL,
    "protocol_version": VERSION,
}, ("id", "expired", "reason", "protocol_version"))

PACK_CARD = _obj({
    "slug": STR,
    "title": STR,
    "type": STR_OR_NULL,
    "summary": STR,
    "open_threads": _arr(THREAD),
    "edges": _arr(EDGE),
    "backlink_count": INT,
}, ("slug", "title", "summary", "open_threads"))

CONTEXT_PACK = _obj({
    "entities": _arr(STR),
    "cards": _arr(PACK_CARD),
    "open_threads": _arr(THREAD),
    "facts": _arr(PACK_FACT),
    "text": STR,
    "degraded_reason": STR,
    **BUDGET,
    "protocol_version": VERSION,
}, ("protocol_version", "entities", "cards", "open_threads", "facts"))

DELTA = _obj({
    "since": STR,
    "pages": _arr(_obj({"slug": STR, "source_id": STR, "title": STR, "updated_at": STR},
                       ("slug", "title", "updated_at"))),
    "facts": _arr(PACK_FACT),
    "threads": _arr(THREAD),
    "text": STR,
    "has_more": BOOL,
    "next_cursor": _obj({"since": STR, "slug": STR}, ("since", "slug")),
    "facts_cursor": STR,
    "degraded_reason": STR,
    **BUDGET,
    "protocol_version": VERSION,
}, ("protocol_version", "since", "pages", "facts", "threads"))

RESPONSE_SCHEMAS: dict[str, dict] = {
    "recall": RECALL,
    "remember": REMEMBER,
    "entity": ENTITY,
    "synthesize": SYNTHESIZE,
    "forget": FORGET,
    "context_pack": CONTEXT_PACK,
    "delta": DELTA,
}
assert tuple(RESPONSE_SCHEMAS) == VERB_NAMES

ERROR_SCHEMA = _obj({
    "error": {"type": "string", "enum": list(ERROR_CODES)},
    "message": STR,
    "suggestion": STR,
    "detail": STR,
    "protocol_version": VERSION,
}, ("error", "message"))


# -- the validator ------------------------------------------------------------

def json_type(value) -> str:
    """The JSON name of a decoded value's type (integral numbers are `integer`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _type_ok(value, expected: str) -> bool:
    actual = json_type(value)
    if expected == "number":
        return actual in ("number", "integer")
    return actual == expected


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _show(value) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value, schema: dict, path: str = "") -> list[str]:
    """Check a decoded JSON value against a registry schema.

    Returns one line per problem, each naming the dotted path, e.g.
    `facts.0.id: expected integer, got string`; an empty list means valid.
    """
    problems: list[str] = []
    _check(value, schema, path, problems)
    return problems


def _check(value, schema: dict, path: str, problems: list[str]) -> None:
    where = path or "(response)"
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_type_ok(value, t) for t in allowed):
            problems.append(f"{where}: expected {' or '.join(allowed)}, got {json_type(value)}")
            return  # a wrong type makes every deeper check noise
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: expected {_show(schema['const'])}, got {_show(value)}")
    if "enum" in schema and value is not None and value not in schema["enum"]:
        problems.append(f"{where}: {_show(value)} is not one of {', '.join(map(str, schema['enum']))}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                problems.append(f"{_join(path, key)}: missing (required)")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                _check(value[key], sub, _join(path, key), problems)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], _join(path, i), problems)
