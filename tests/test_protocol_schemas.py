"""The response-shape registry and its validator (docs/protocol.md §5.3, §5.4)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.daemon.protocol.shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS, json_type, validate
from brain.daemon.protocol.tools import VERB_NAMES

GOOD_RECALL = {
    "facts": [{"id": 7, "fact_id": "7", "fact": "Alice likes tea", "kind": "preference",
               "entity_slug": "people/alice", "provenance": "chat", "valid_until": None}],
    "total": 1,
    "protocol_version": 1,
}


def test_registry_covers_every_verb_in_protocol_order():
    assert tuple(RESPONSE_SCHEMAS) == VERB_NAMES


def test_required_fields_are_the_protocols():
    req = {v: set(s["required"]) for v, s in RESPONSE_SCHEMAS.items()}
    assert req == {
        "recall": {"facts", "total", "protocol_version"},
        "remember": {"id", "status", "status_text", "entity_slug", "valid_until", "protocol_version"},
        "entity": {"protocol_version", "found", "latency_ms"},
        "synthesize": {"answer", "sources", "cost", "protocol_version"},
        "forget": {"id", "expired", "reason", "protocol_version"},
        "context_pack": {"protocol_version", "entities", "cards", "open_threads", "facts"},
        "delta": {"protocol_version", "since", "pages", "facts", "threads"},
    }
    fact = RESPONSE_SCHEMAS["recall"]["properties"]["facts"]["items"]
    assert set(fact["required"]) == {"id", "fact", "kind", "fact_id", "provenance"}
    card = RESPONSE_SCHEMAS["entity"]["properties"]["card"]
    assert set(card["required"]) == {"entity", "aka", "summary", "last_touched", "open_threads", "edges",
                                     "backlink_count", "active_fact_count"}
    assert set(ERROR_SCHEMA["required"]) == {"error", "message"}


def test_our_additive_fields_are_declared_and_typed():
    result = RESPONSE_SCHEMAS["recall"]["properties"]["results"]["items"]["properties"]
    assert result["indexed_at"] == {"type": "string"} and result["stale"] == {"type": "boolean"}
    assert RESPONSE_SCHEMAS["remember"]["properties"]["degraded_dedup"] == {"type": "boolean"}
    assert "has_more" in RESPONSE_SCHEMAS["delta"]["properties"]


def test_a_good_answer_is_valid_and_extra_keys_are_legal():
    assert validate(GOOD_RECALL, RESPONSE_SCHEMAS["recall"]) == []
    assert validate(dict(GOOD_RECALL, something_new={"x": 1}), RESPONSE_SCHEMAS["recall"]) == []


def test_problems_name_the_dotted_path():
    bad = json.loads(json.dumps(GOOD_RECALL))
    bad["facts"][0]["id"] = "7"
    assert validate(bad, RESPONSE_SCHEMAS["recall"]) == ["facts.0.id: expected integer, got string"]


def test_missing_required_key_is_reported_but_null_counts_as_present():
    body = {"id": "1", "status_text": "x", "entity_slug": None, "valid_until": None, "protocol_version": 1}
    assert validate(body, RESPONSE_SCHEMAS["remember"]) == ["status: missing (required)"]
    # entity_slug is nullable and present: fine; a null where null is not allowed is a type problem
    body["status"] = None
    assert validate(body, RESPONSE_SCHEMAS["remember"]) == ["status: expected string, got null"]


def test_enum_violation_and_enum_skips_null():
    assert validate({"kind": "commitment", "text": "t", "date": None},
                    RESPONSE_SCHEMAS["entity"]["properties"]["card"]["properties"]["open_threads"]["items"]) == []
    probs = validate({"error": "oops", "message": "m"}, ERROR_SCHEMA)
    assert probs == ['error: "oops" is not one of ' + ", ".join(ERROR_SCHEMA["properties"]["error"]["enum"])]
    assert validate(None, {"type": ["string", "null"], "enum": ["a"]}) == []


def test_const_protocol_version():
    assert validate({"error": "not_found", "message": "m", "protocol_version": 2}, ERROR_SCHEMA) == [
        "protocol_version: expected 1, got 2"]


def test_optional_key_sent_as_null_is_caught():
    body = {"error": "internal", "message": "m", "detail": None}
    assert validate(body, ERROR_SCHEMA) == ["detail: expected string, got null"]


def test_integer_means_integral_number():
    schema = RESPONSE_SCHEMAS["entity"]
    assert validate({"found": False, "latency_ms": 3.0, "protocol_version": 1}, schema) == []
    assert validate({"found": False, "latency_ms": 3.5, "protocol_version": 1}, schema) == [
        "latency_ms: expected integer, got number"]
    assert validate({"found": False, "latency_ms": True, "protocol_version": 1}, schema) == [
        "latency_ms: expected integer, got boolean"]


def test_a_type_mismatch_stops_descent():
    body = dict(GOOD_RECALL, facts={"0": {"id": "x"}})
    assert validate(body, RESPONSE_SCHEMAS["recall"]) == ["facts: expected array, got object"]


def test_union_types_are_spelled_out():
    assert validate(5, {"type": ["string", "null"]}) == ["(response): expected string or null, got integer"]


def test_json_type_names():
    assert [json_type(v) for v in (None, True, 1, 1.5, "s", [], {})] == [
        "null", "boolean", "integer", "number", "string", "array", "object"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["facts", "total", "card", "id", "status", "protocol_version", "found", "entity", "items", "x"]), inner,
        max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from(list(RESPONSE_SCHEMAS.values()) + [ERROR_SCHEMA]))
def test_validator_never_raises_and_names_each_problem(value, schema):
    problems = validate(value, schema)
    assert all(isinstance(p, str) and ": " in p for p in problems)
