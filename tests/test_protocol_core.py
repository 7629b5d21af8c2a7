"""Envelopes, validation order, timestamps, budget packing (docs/protocol.md §1, §4)."""

import datetime as dt
import json

import pytest
from hypothesis import given, strategies as st

from conftest import call

from brain.daemon.protocol.budget import budget_of, pack_greedy
from brain.daemon.protocol.caller import Caller
from brain.daemon.protocol.errors import ERROR_CODES, InvalidParams, NotFound, Unavailable, VerbError
from brain.indexer.vault.timestamps import iso
from brain.daemon.protocol.timeparse import parse_date, parse_since_strict, parse_ttl


def test_each_code_has_one_exception_type():
    codes = {cls.code for cls in VerbError.__subclasses__()}
    assert codes == set(ERROR_CODES)


def test_envelope_omits_absent_optional_keys():
    env = NotFound("gone").envelope()
    assert env == {"error": "not_found", "message": "gone", "protocol_version": 1}
    assert "null" not in json.dumps(env)
    env = Unavailable("x", "do y", detail="z").envelope()
    assert env["suggestion"] == "do y" and env["detail"] == "z"


def boom(engine, args, caller):
    raise RuntimeError("disk on fire")


def test_uncaught_exception_becomes_internal_envelope(engine, remote):
    from brain.daemon.protocol.tools import REGISTRY, ToolDef

    with REGISTRY.registered(ToolDef("boom", "Always fails.", (), handler=f"{__name__}:boom")):
        body, err = call(engine, "boom", {}, remote)
    assert err and body["error"] == "internal" and body["message"] == "disk on fire"
    assert body["suggestion"] and body["protocol_version"] == 1


def test_unknown_and_hidden_tools_get_identical_envelopes(engine):
    verbs_only = Caller(remote=True, surface="verbs")
    hidden, err1 = call(engine, "put_page", {"slug": "a", "content": "b"}, verbs_only)
    assert err1 and hidden["error"] == "unknown_tool" and "protocol_version" not in hidden
    nonexistent, err2 = call(engine, "put_pagf", {}, Caller(remote=True, surface="verbs"))
    assert err2 and nonexistent["message"] == "Unknown tool: put_pagf"
    assert hidden["message"] == "Unknown tool: put_page"
    # the suggestion only names visible tools
    assert "put_page" not in json.dumps(nonexistent)
    near, _ = call(engine, "recal", {}, verbs_only)
    assert near["suggestion"] == 'Did you mean "recall"?'


def test_first_failing_param_in_declaration_order_wins(engine, remote):
    body, _ = call(engine, "remember", {"fact": 1, "provenance": 2, "kind": "nope"}, remote)
    assert body["message"] == 'Parameter "fact" must be a string'
    body, _ = call(engine, "remember", {"provenance": 2}, remote)
    assert body["message"] == "Missing required parameter: fact"


def test_booleans_are_not_numbers(engine, remote):
    body, err = call(engine, "recall", {"limit": True}, remote)
    assert err and body["message"] == 'Parameter "limit" must be a number'


def test_iso_matches_js_toisostring():
    assert iso(dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) == "1970-01-01T00:00:00.000Z"
    assert iso(dt.datetime(2026, 8, 22, 10, 15, 30, 123999, tzinfo=dt.timezone.utc)) == "2026-08-22T10:15:30.123Z"
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert iso(dt.datetime(2026, 1, 1, 2, 0, tzinfo=plus2)) == "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize("text,expected", [
    ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
    ("January 1, 2000 00:00:00 GMT", "2000-01-01T00:00:00.000Z"),
    ("2026-06-12", "2026-06-12T00:00:00.000Z"),
    ("2026-06-12T09:30:00+02:00", "2026-06-12T07:30:00.000Z"),
    ("Tue, 01 Dec 2026 10:00:00 GMT", "2026-12-01T10:00:00.000Z"),
])
def test_strict_since_normalizes(text, expected):
    assert iso(parse_since_strict(text)) == expected


@pytest.mark.parametrize("text", ["definitely not a date", "yesterday-ish", "8 hours ago"])
def test_strict_since_rejects_with_fix(text):
    with pytest.raises(InvalidParams) as e:
        parse_since_strict(text)
    assert "ISO 8601" in e.value.suggestion


def test_budget_of_floors_and_ignores_non_positive():
    assert budget_of(10.9) == 10
    assert budget_of(0) is None and budget_of(-1) is None and budget_of(0.5) is None
    assert budget_of(True) is None and budget_of(float("inf")) is None and budget_of(float("nan")) is None


@given(st.text(max_size=40))
def test_date_and_ttl_parsers_never_raise_unexpectedly(text):
    parse_date(text)
    try:
        parse_ttl(text)
    except InvalidParams as e:
        assert e.suggestion


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=20), st.integers(min_value=1, max_value=200))
def test_pack_greedy_never_exceeds_budget_and_is_a_prefix(costs, budget):
    items = list(range(len(costs)))
    kept, used = pack_greedy(items, costs, budget)
    assert used <= budget and kept == items[: len(kept)]
    assert used == sum(costs[: len(kept)])
    if len(kept) < len(items):
        assert used + costs[len(kept)] > budget


def test_iso_pads_years_before_1000():
    assert iso(dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)) == "0001-01-01T00:00:00.000Z"
    assert iso(dt.datetime(999, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc)) == "0999-12-31T23:59:59.000Z"


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_instants_outside_the_calendar_are_unparseable_not_internal(engine, remote, text):
    assert parse_date(text) is None
    body, err = call(engine, "recall", {"since": text}, remote)
    assert not err and body["facts"] == []
    for verb, args in (("context_pack", {"entities": "x", "since": text}), ("delta", {"since": text})):
        body, err = call(engine, verb, args, remote)
        assert err and body["error"] == "invalid_params", (verb, body)


def test_enormous_relative_since_is_an_empty_arm_not_internal(engine, remote):
    call(engine, "remember", {"fact": "a", "provenance": "t"}, remote)
    for text in ("99999999999999d", "99999999999999 days ago"):
        body, err = call(engine, "recall", {"since": text}, remote)
        assert not err and body["facts"] == [], body


def test_non_finite_or_huge_limit_is_invalid_params(engine, remote):
    for bad in (float("inf"), float("nan"), 10**309, -(2**53)):
        body, err = call(engine, "recall", {"limit": bad}, remote)
        assert err and body["error"] == "invalid_params" and '"limit"' in body["message"], bad
    body, err = call(engine, "recall", {"limit": 2**53 - 1}, remote)
    assert not err and body["total"] == 0


def test_non_finite_page_limits_are_not_internal(engine, local):
    for tool, args in (("list_pages", {}), ("search", {"query": "x"})):
        body, err = call(engine, tool, {**args, "limit": float("inf")}, local)
        assert body.get("error") != "internal", (tool, body)


def test_iso_year_month_date_is_utc_midnight_but_a_bare_number_is_not_a_year():
    # an ISO 8601 reduced-precision date, which JS Date.parse (the reference's parser) accepts
    assert iso(parse_since_strict("2026-06")) == "2026-06-01T00:00:00.000Z"
    assert parse_date("2026-13") is None
    with pytest.raises(InvalidParams):
        parse_ttl("3600")


def test_remote_status_hides_paths_and_private_page_counts(engine, remote, local):
    engine.page_db.execute(
        "INSERT INTO pages(slug, path, title, title_key, tail, visibility, updated_at, indexed_at) "
        "VALUES ('people/doc', 'people/doc.md', 'Doc', 'doc', 'doc', 'private', 'x', 'x')")
    mine, _ = call(engine, "status", {}, local)
    theirs, _ = call(engine, "status", {}, remote)
    assert mine["pages"] == 1 and mine["vault"] == str(engine.vault)
    assert theirs["pages"] == 0 and "vault" not in theirs
