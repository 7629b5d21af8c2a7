"""Judging a conformance answer: placeholders, paths, predicates, the case file itself."""

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.daemon.conformance.runner import CASES_FILE, load_cases, new_marker
from brain.daemon.conformance.expect import MISSING, PREDICATES, check_expectation, get_path, judge, substitute
from brain.daemon.protocol.tools import VERB_NAMES


def test_marker_is_run_and_base36_milliseconds():
    assert new_marker(0) == "run-0"
    assert new_marker(36 ** 3 + 35) == "run-100z"
    assert new_marker().startswith("run-") and new_marker() == new_marker().lower()


def test_substitute_marker_and_saved_ids_everywhere():
    params = {"id": "{{id:fact1}}", "x": ["{{marker}}-a", {"y": "{{ID:Other}}"}], "n": 5}
    out = substitute(params, "run-abc", {"fact1": "12"})
    assert out == {"id": "12", "x": ["run-abc-a", {"y": "MISSING-ID-Other"}], "n": 5}


@given(st.text())
def test_substitute_leaves_text_without_placeholders_alone(text):
    if "{{" not in text:
        assert substitute(text, "run-x", {}) == text


def test_paths_index_arrays_and_size_them():
    body = {"facts": [{"fact_id": "1"}, {"fact_id": "2"}], "text": "abc"}
    assert get_path(body, "facts.1.fact_id") == "2"
    assert get_path(body, "facts.length") == 2
    assert get_path(body, "text.length") == 3
    assert get_path(body, "facts.2.fact_id") is MISSING
    assert get_path(body, "nope.deeper") is MISSING
    assert get_path(body, "") is body


@pytest.mark.parametrize("exp,body,problem", [
    ({"path": "a", "equals": 1}, {"a": 1}, None),
    ({"path": "a", "equals": 1}, {"a": True}, "a: expected 1, got true"),
    ({"path": "a", "equals": None}, {}, "a: expected null, got missing"),
    ({"path": "a", "oneOf": ["x", "y"]}, {"a": "z"}, 'a: expected one of ["x", "y"], got "z"'),
    ({"path": "a", "type": "number"}, {"a": 3}, None),
    ({"path": "a", "type": "integer"}, {"a": 3.5}, "a: expected integer, got number"),
    ({"path": "a", "type": "string"}, {}, "a: expected string, got missing"),
    ({"path": "a", "gte": 1}, {"a": 0}, "a: expected ≥ 1, got 0"),
    ({"path": "a", "lte": 10}, {"a": "5"}, 'a: expected a number, got "5"'),
    ({"path": "a", "nonEmptyString": True}, {"a": "  "}, 'a: expected a non-empty string, got "  "'),
    ({"path": "a", "absentOrNotContains": "SECRET"}, {}, None),
    ({"path": "a", "absentOrNotContains": "SECRET"}, {"a": [{"t": "a SECRET"}]}, 'a: must not contain "SECRET"'),
    ({"path": "", "contains": "needle"}, {"deep": ["needle"]}, None),
    ({"path": "a", "absent": True}, {"a": None}, "a: expected absent, got null"),
    ({"path": "total", "equalsPath": "facts.length"}, {"total": 2, "facts": [1]},
     "total: expected facts.length (1), got 2"),
    ({"path": "used", "ltePath": "budget"}, {"used": 5, "budget": 4}, "used: expected ≤ budget (4), got 5"),
    ({"path": "a", "bogus": 1}, {"a": 1}, "a: the case names no known predicate (" + ", ".join(PREDICATES) + ")"),
])
def test_predicates(exp, body, problem):
    assert check_expectation(body, exp) == problem


def test_judge_error_case_checks_code_suggestion_and_envelope():
    case = {"verb": "forget", "expectErrorCode": "not_found", "expectSuggestion": True, "validateSchema": True}
    good = {"error": "not_found", "message": "m", "suggestion": "fix", "protocol_version": 1}
    assert judge(case, good, True, {}) == []
    assert judge(case, dict(good, suggestion=" "), True, {}) == ['suggestion: expected a non-empty string, got " "']
    assert judge(case, dict(good, detail=None), True, {}) == ["detail: expected string, got null"]
    assert judge(case, {"id": "1"}, False, {})[0].startswith("expected error 'not_found', got a success")


def test_judge_success_case_saves_ids_and_refuses_non_strings():
    case = {"verb": "remember", "saveAs": {"key": "Fact1", "path": "id"}}
    saved = {}
    assert judge(case, {"id": "9"}, False, saved) == [] and saved == {"fact1": "9"}
    assert judge(case, {"id": 9}, False, saved) == ["saveAs Fact1: id is not a string (got 9)"]
    assert judge({"verb": "recall"}, {"error": "internal", "message": "boom"}, True, {}) == [
        'unexpected error "internal": boom']


def test_judge_synthesize_accepts_a_clean_unavailable_only():
    case = {"verb": "synthesize"}
    ok = {"error": "unavailable", "message": "no LLM", "suggestion": "configure one", "protocol_version": 1}
    assert judge(case, ok, True, {}) == []
    assert judge(case, dict(ok, error="internal"), True, {}) == ['error: expected a success or "unavailable", got "internal"']
    assert judge(case, {"answer": "a", "sources": [], "protocol_version": 1}, False, {}) == ["cost: missing (required)"]


def test_case_file_is_well_formed():
    cases = load_cases()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names))
    known = {"name", "verb", "tool", "params", "validateSchema", "expectErrorCode", "expectSuggestion", "expect",
             "saveAs", "requiresSeededEntity", "requiresSynthesizeFlag", "beyondProtocol"}
    for c in cases:
        assert set(c) <= known, c["name"]
        assert c.get("verb") in VERB_NAMES or "tool" in c, c["name"]
        assert isinstance(c.get("params", {}), dict)
        for exp in c.get("expect", []):
            assert sum(k in PREDICATES for k in exp) == 1, (c["name"], exp)
    # the file is shipped as package data next to the runner
    assert CASES_FILE.name == "cases.json" and CASES_FILE.parent.name == "conformance"


def test_case_file_opens_with_the_protocols_twenty_cases_in_order():
    first = [(c.get("verb"), c.get("expectErrorCode")) for c in load_cases()[:20]]
    assert [v for v, _ in first] == ["remember"] * 6 + ["recall"] * 4 + ["entity"] * 3 + ["forget"] * 3 + [
        "synthesize", "context_pack", "delta", "delta"]
    assert first[0][1] == "invalid_params" and first[1][1] == "provenance_required"
    assert first[15][1] == "not_found" and first[19][1] == "invalid_params"


def test_every_id_placeholder_is_saved_by_an_earlier_case():
    saved = set()
    for c in load_cases():
        used = {k.lower() for k in re.findall(r"\{\{id:([a-z0-9_-]+)\}\}", json.dumps(c), re.I)}
        assert used <= saved, (c["name"], used - saved)
        if "saveAs" in c:
            saved.add(c["saveAs"]["key"].lower())


def test_every_write_carries_the_marker():
    # the cases that succeed are the ones that write into the target's brain
    writes = [c for c in load_cases() if c.get("verb") in ("remember", "put_page") and "expectErrorCode" not in c]
    assert writes
    for c in writes:
        text = c["params"].get("fact", "") if c["verb"] == "remember" else json.dumps(c["params"])
        assert "{{marker}}" in text, c["name"]
