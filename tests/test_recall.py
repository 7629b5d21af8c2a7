"""recall's facts arm: docs/protocol.md §3.1 and the §10 recall list."""

import datetime as dt
import json

from conftest import call

LEGACY_KEYS = {"id", "fact_id", "fact", "kind", "entity_slug", "provenance", "source", "visibility",
               "notability", "confidence", "valid_from", "valid_until", "expired_at", "superseded_by",
               "consolidated_at", "consolidated_into", "source_session", "context", "created_at"}


def remember(engine, caller, fact, **kw):
    body, err = call(engine, "remember", {"fact": fact, "provenance": "test", **kw}, caller)
    assert not err, body
    return body["id"]


def test_legacy_superset_and_no_optional_keys(engine, remote):
    fid = remember(engine, remote, "Bob owns a boat", entity="people/bob")
    body, err = call(engine, "recall", {"entity": "people/bob"}, remote)
    assert not err
    assert set(body) == {"facts", "total", "protocol_version"}
    f = body["facts"][0]
    assert LEGACY_KEYS <= set(f)
    assert f["id"] == int(fid) and isinstance(f["id"], int)
    assert f["fact_id"] == fid and f["provenance"] == f["source"] == "test"
    assert body["total"] == 1


def test_empty_brain_is_success_with_empty_arrays(engine, remote):
    body, err = call(engine, "recall", {}, remote)
    assert not err and body["facts"] == [] and body["total"] == 0


def test_budget_large_keeps_everything(engine, remote):
    for i in range(5):
        remember(engine, remote, f"fact number {i} about bob", entity="people/bob")
    body, _ = call(engine, "recall", {"entity": "people/bob", "budget_tokens": 10000}, remote)
    assert body["budget_tokens"] == 10000 and 0 < body["budget_used"] <= 10000
    assert body["dropped_count"] == 0 and body["total"] == 5


def test_budget_one_returns_nothing_and_counts_drops(engine, remote):
    for i in range(3):
        remember(engine, remote, f"fact {i}", entity="people/bob")
    body, _ = call(engine, "recall", {"entity": "people/bob", "budget_tokens": 1}, remote)
    assert body["total"] == 0 and body["facts"] == []
    assert body["dropped_count"] == 3 and body["budget_used"] == 0


def test_budget_is_a_greedy_prefix(engine, remote):
    remember(engine, remote, "s" * 40, entity="people/b")   # oldest: 10 tokens
    remember(engine, remote, "l" * 400, entity="people/b")  # 100 tokens
    remember(engine, remote, "t" * 8, entity="people/b")    # newest: 2 tokens
    body, _ = call(engine, "recall", {"entity": "people/b", "budget_tokens": 50}, remote)
    # newest first: the 2-token fact fits, the 100-token one does not, and the
    # 10-token one after it is not tried
    assert [f["fact"] for f in body["facts"]] == ["t" * 8]
    assert body["budget_used"] == 2 and body["dropped_count"] == 2


def test_non_positive_budget_means_no_budget(engine, remote):
    remember(engine, remote, "x")
    for b in (0, -5):
        body, _ = call(engine, "recall", {"budget_tokens": b}, remote)
        assert "budget_tokens" not in body and body["total"] == 1
    body, err = call(engine, "recall", {"budget_tokens": "500"}, remote)
    assert err and body["error"] == "invalid_params"


def test_remote_never_sees_private_facts(engine, remote, local):
    remember(engine, local, "PRIVATE-SENTINEL dentist on Tuesday", entity="people/me", visibility="private")
    remember(engine, local, "public thing", entity="people/me")
    body, _ = call(engine, "recall", {"entity": "people/me"}, remote)
    assert "PRIVATE-SENTINEL" not in json.dumps(body)
    assert body["total"] == 1
    body, _ = call(engine, "recall", {"entity": "people/me"}, local)
    assert body["total"] == 2


def test_private_filter_applies_before_limit(engine, remote, local):
    remember(engine, local, "world one")
    for i in range(5):
        remember(engine, local, f"private {i}", visibility="private")
    body, _ = call(engine, "recall", {"limit": 1}, remote)
    assert [f["fact"] for f in body["facts"]] == ["world one"]


def test_entity_beats_since_and_unparseable_since_is_empty(engine, remote):
    remember(engine, remote, "about bob", entity="people/bob")
    body, _ = call(engine, "recall", {"entity": "people/bob", "since": "2999-01-01"}, remote)
    assert body["total"] == 1  # since ignored when entity is given
    body, err = call(engine, "recall", {"since": "not a date at all"}, remote)
    assert not err and body["facts"] == []
    body, _ = call(engine, "recall", {"since": "2999-01-01"}, remote)
    assert body["total"] == 0
    for rel in ("8 hours ago", "30m", "2d"):
        body, _ = call(engine, "recall", {"since": rel}, remote)
        assert body["total"] == 1, rel


def test_session_arm(engine, remote):
    remember(engine, remote, "in session", session_id="s-1")
    remember(engine, remote, "elsewhere")
    body, _ = call(engine, "recall", {"session_id": "s-1"}, remote)
    assert [f["fact"] for f in body["facts"]] == ["in session"]


def test_limit_default_and_cap(engine, remote):
    for i in range(120):
        engine.facts.insert(fact=f"f{i}", kind="fact", entity_slug=None, visibility="world",
                            source="t", valid_until=None)
    assert call(engine, "recall", {}, remote)[0]["total"] == 50
    assert call(engine, "recall", {"limit": 500}, remote)[0]["total"] == 100
    assert call(engine, "recall", {"limit": 7}, remote)[0]["total"] == 7
    assert call(engine, "recall", {"limit": 0}, remote)[0]["total"] == 50
    assert call(engine, "recall", {"limit": 2.5}, remote)[0]["total"] == 50


def test_grep_is_case_insensitive(engine, remote):
    remember(engine, remote, "Prefers Dark Mode")
    remember(engine, remote, "likes tea")
    body, _ = call(engine, "recall", {"grep": "dark"}, remote)
    assert [f["fact"] for f in body["facts"]] == ["Prefers Dark Mode"]


def test_expired_hidden_unless_asked(engine, remote):
    fid = remember(engine, remote, "temporary", entity="people/x")
    call(engine, "forget", {"id": fid}, remote)
    assert call(engine, "recall", {"entity": "people/x"}, remote)[0]["total"] == 0
    body, _ = call(engine, "recall", {"entity": "people/x", "include_expired": True}, remote)
    assert body["total"] == 1 and body["facts"][0]["expired_at"]


def test_past_ttl_is_not_active(engine, remote):
    remember(engine, remote, "lapsed", entity="people/x", ttl="2020-01-01T00:00:00Z")
    remember(engine, remote, "current", entity="people/x", ttl="30d")
    body, _ = call(engine, "recall", {"entity": "people/x"}, remote)
    assert [f["fact"] for f in body["facts"]] == ["current"]


def test_query_arm_without_index_is_degraded_not_error(engine, remote):
    body, err = call(engine, "recall", {"query": "anything"}, remote)
    assert not err
    assert body["results"] == []  # no page index attached: nothing to search yet
    assert body["search_degraded"] == "keyword_only_no_embedding_provider"


def test_supersessions_arm_lists_replaced_facts(engine, remote):
    old = engine.facts.insert(fact="Alice works at Acme", kind="fact", entity_slug="people/alice",
                              visibility="world", source="t", valid_until=None)
    new = engine.facts.insert(fact="Alice left Acme", kind="fact", entity_slug="people/alice",
                              visibility="world", source="t", valid_until=None, supersede=old)
    body, _ = call(engine, "recall", {"supersessions": True}, remote)
    assert [f["id"] for f in body["facts"]] == [old]
    assert body["facts"][0]["superseded_by"] == new
    live, _ = call(engine, "recall", {"entity": "people/alice"}, remote)
    assert [f["id"] for f in live["facts"]] == [new]


def test_include_pending_adds_count(engine, remote):
    body, _ = call(engine, "recall", {"include_pending": True}, remote)
    assert body["pending_consolidation_count"] == 0
