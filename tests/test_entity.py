"""entity: the resolution ladder and the card (docs/protocol.md §3.3, §10 entity list)."""

import json

import pytest

from brain.daemon.protocol.shapes import RESPONSE_SCHEMAS, validate
from conftest import call
from page_seed import add_link, add_page, add_timeline, days_ago

CARD_KEYS = {"entity", "aka", "summary", "last_touched", "open_threads", "edges", "backlink_count",
             "active_fact_count"}


def check_entity_schema(body):
    """The §5.4 registry entry for entity, checked the way the conformance runner does."""
    assert validate(body, RESPONSE_SCHEMAS["entity"]) == []
    assert body["protocol_version"] == 1
    assert isinstance(body["found"], bool)
    assert isinstance(body["latency_ms"], int) and not isinstance(body["latency_ms"], bool)
    for s in body.get("suggestions", []):
        assert isinstance(s["slug"], str) and isinstance(s["title"], str)
        assert s["create_safety"] in ("exists", "probable", "unknown")
    if "card" not in body:
        return
    card = body["card"]
    assert CARD_KEYS <= set(card)
    assert isinstance(card["entity"]["slug"], str) and isinstance(card["entity"]["title"], str)
    assert card["entity"]["type"] is None or isinstance(card["entity"]["type"], str)
    assert isinstance(card["aka"], list) and isinstance(card["summary"], str)
    assert set(card["last_touched"]) == {"updated_at", "last_retrieved_at", "last_timeline_date"}
    for v in card["last_touched"].values():
        assert v is None or isinstance(v, str)
    for t in card["open_threads"]:
        assert t["kind"] in ("commitment", "recent_event") and isinstance(t["text"], str)
        assert t["date"] is None or isinstance(t["date"], str)
    for e in card["edges"]:
        assert isinstance(e["type"], str) and e["direction"] in ("out", "in") and isinstance(e["slug"], str)
        assert e.get("context") is None or isinstance(e["context"], str)
    assert isinstance(card["backlink_count"], int) and isinstance(card["active_fact_count"], int)


def entity(engine, caller, name):
    body, err = call(engine, "entity", {"name": name}, caller)
    assert not err, body
    check_entity_schema(body)
    return body


def remember(engine, caller, fact, **kw):
    body, err = call(engine, "remember", {"fact": fact, "provenance": "test", **kw}, caller)
    assert not err, body
    return body


class ExplodingLLM:
    """Any use of the LLM client fails the test: entity is zero-LLM."""

    def __getattr__(self, name):
        raise AssertionError(f"entity touched the LLM client ({name})")


def test_exact_namespaced_slug_gives_a_full_card_without_any_llm(engine, remote):
    engine.llm = ExplodingLLM()
    add_page(engine.page_db, "people/conformance-x", "Conformance X", type="person",
             lead="Synthetic entity for a MEMORY_VERBS conformance run.")
    body = entity(engine, remote, "people/conformance-x")
    assert body["found"] is True
    card = body["card"]
    assert card["entity"] == {"slug": "people/conformance-x", "title": "Conformance X", "type": "person"}
    assert card["summary"] == "Synthetic entity for a MEMORY_VERBS conformance run."
    assert card["backlink_count"] == 0 and card["active_fact_count"] == 0
    assert "suggestions" not in body


def test_alias_title_slug_and_suffix_each_resolve(engine, remote):
    db = engine.page_db
    add_page(db, "people/alice-example", "Alice Example", aliases=["Ally", "A. Example"])
    for name in ("ally", "  A. EXAMPLE ", "Alice Example", "alice   example", "people/alice-example",
                 "alice-example", "Alice-Example", "People/Alice Example"):
        body = entity(engine, remote, name)
        assert body["found"], name
        assert body["card"]["entity"]["slug"] == "people/alice-example", name
    assert entity(engine, remote, "ally")["card"]["aka"] == ["a. example", "ally"]


def test_rank_beats_recency_and_recency_breaks_ties(engine, remote):
    db = engine.page_db
    # "jordan" is an alias of the oldest page, the exact title of a newer one,
    # the exact slug of a newer one still and the slug tail of the newest:
    # rank decides before age does
    add_page(db, "people/j-old", "J Old", aliases=["Jordan"], updated_at="2020-01-01T00:00:00.000Z")
    add_page(db, "notes/jordan-title", "Jordan", updated_at="2025-01-01T00:00:00.000Z")
    add_page(db, "jordan", "Jordan Top", updated_at="2026-03-01T00:00:00.000Z")
    add_page(db, "people/jordan", "Jordan Reyes", updated_at="2026-06-01T00:00:00.000Z")
    body = entity(engine, remote, "Jordan")
    assert body["card"]["entity"]["slug"] == "people/j-old"
    # exact title and exact slug share rank 1 (newest first), the suffix comes after
    assert [s["slug"] for s in body["suggestions"]] == ["jordan", "notes/jordan-title", "people/jordan"]
    assert all(s["create_safety"] == "exists" for s in body["suggestions"])
    assert body["suggestions"][2]["title"] == "Jordan Reyes"


def test_last_retrieved_counts_as_touched(engine, remote):
    db = engine.page_db
    add_page(db, "work/sam", "Sam", updated_at="2026-01-01T00:00:00.000Z")
    add_page(db, "home/sam", "Sam", updated_at="2025-01-01T00:00:00.000Z",
             last_retrieved_at="2026-03-01T00:00:00.000Z")
    body = entity(engine, remote, "sam")
    assert body["card"]["entity"]["slug"] == "home/sam"
    assert body["card"]["last_touched"]["last_retrieved_at"] == "2026-03-01T00:00:00.000Z"
    assert [s["slug"] for s in body["suggestions"]] == ["work/sam"]


def test_at_most_three_runners_up(engine, remote):
    for i in range(6):
        add_page(engine.page_db, f"folder{i}/kim", "Kim")
    body = entity(engine, remote, "Kim")
    assert body["found"] and len(body["suggestions"]) == 3


def test_first_name_finds_the_person_remember_files_it_under(engine, remote, local):
    add_page(engine.page_db, "people/zoe-mercer", "Zoe Mercer", type="person")
    assert remember(engine, remote, "Zoe likes tea", entity="Zoe")["entity_slug"] == "people/zoe-mercer"
    body = entity(engine, remote, "Zoe")
    assert body["card"]["entity"]["slug"] == "people/zoe-mercer"
    assert body["card"]["active_fact_count"] == 1


def test_miss_is_found_false_with_a_suggestions_array(engine, remote):
    body = entity(engine, remote, "zzz-no-such-entity-run-1")
    assert body["found"] is False and body["suggestions"] == [] and "card" not in body


@pytest.mark.parametrize("name", ["", "   ", "\n\t"])
def test_empty_name_is_invalid_params_with_a_fix(engine, remote, name):
    body, err = call(engine, "entity", {"name": name}, remote)
    assert err and body["error"] == "invalid_params" and body["suggestion"].strip()


def test_huge_name_is_a_plain_miss(engine, remote):
    body = entity(engine, remote, "x" * 10_000)
    assert body["found"] is False


def test_summary_prefers_frontmatter_and_clips_to_160(engine, remote):
    db = engine.page_db
    add_page(db, "a/one", "One", summary="  Short\n  summary. ", lead="Lead sentence.")
    add_page(db, "a/two", "Two", lead="word " * 100)
    add_page(db, "a/three", "Three", lead="| # | claim | kind |")
    assert entity(engine, remote, "a/one")["card"]["summary"] == "Short summary."
    s = entity(engine, remote, "a/two")["card"]["summary"]
    assert len(s) == 160 and s.endswith("…")
    assert entity(engine, remote, "a/three")["card"]["summary"] == ""


def test_open_threads_commitments_first_then_recent_timeline(engine, local):
    db = engine.page_db
    add_page(db, "people/pat", "Pat")
    add_timeline(db, "people/pat", days_ago(400)[:10], "ancient history")
    add_timeline(db, "people/pat", days_ago(10)[:10], "met for coffee")
    add_timeline(db, "people/pat", days_ago(2)[:10], "signed the lease")
    remember(engine, local, "Pat will send the contract", entity="people/pat", kind="commitment")
    remember(engine, local, "Pat likes jazz", entity="people/pat", kind="preference")
    card = entity(engine, local, "Pat")["card"]
    assert [(t["kind"], t["text"]) for t in card["open_threads"]] == [
        ("commitment", "Pat will send the contract"),
        ("recent_event", "signed the lease"),
        ("recent_event", "met for coffee"),
    ]
    assert card["open_threads"][1]["date"] == days_ago(2)[:10] + "T00:00:00.000Z"
    assert card["last_touched"]["last_timeline_date"] == days_ago(2)[:10] + "T00:00:00.000Z"
    assert card["active_fact_count"] == 2


def test_only_the_five_newest_timeline_entries_count(engine, local):
    db = engine.page_db
    add_page(db, "people/q", "Q")
    # five entries dated in the future crowd out an older one from last week
    for i in range(5):
        add_timeline(db, "people/q", f"2999-01-0{i + 1}", f"future {i}")
    add_timeline(db, "people/q", days_ago(7)[:10], "last week")
    texts = [t["text"] for t in entity(engine, local, "people/q")["card"]["open_threads"]]
    assert "last week" not in texts and len(texts) == 3


def test_old_timeline_gives_date_but_no_thread(engine, local):
    db = engine.page_db
    add_page(db, "people/r", "R")
    add_timeline(db, "people/r", "2001-02-03", "long ago")
    card = entity(engine, local, "people/r")["card"]
    assert card["open_threads"] == []
    assert card["last_touched"]["last_timeline_date"] == "2001-02-03T00:00:00.000Z"


def test_edges_out_first_at_most_ten_and_mentions_source_excluded(engine, remote):
    db = engine.page_db
    add_page(db, "hub", "Hub")
    for i in range(8):
        add_page(db, f"out/{i}", f"Out {i}")
        add_link(db, "hub", f"out/{i}", "works_with", context="" if i == 0 else f"ctx {i}")
    for i in range(5):
        add_page(db, f"in/{i}", f"In {i}")
        add_link(db, f"in/{i}", "hub", "knows")
    add_page(db, "ner/page", "Ner")
    add_link(db, "ner/page", "hub", "mentions", source="mentions")
    add_link(db, "hub", "hub", "self")                 # a self link is no edge
    add_link(db, "hub", "out/1", "works_with", "dup")  # a repeated edge shows once
    card = entity(engine, remote, "hub")["card"]
    assert len(card["edges"]) == 10
    assert [e["direction"] for e in card["edges"]] == ["out"] * 8 + ["in"] * 2
    assert card["edges"][0] == {"type": "works_with", "direction": "out", "slug": "out/0", "context": None}
    assert card["edges"][1]["context"] == "ctx 1"
    assert all(e["slug"] not in ("ner/page", "hub") for e in card["edges"])
    assert card["backlink_count"] == 5


def test_unresolved_links_are_not_edges(engine, remote):
    db = engine.page_db
    pid = add_page(db, "p/a", "A")
    db.execute("INSERT INTO links (from_id, target, to_id, type, source) VALUES (?, 'Nobody', NULL, 'knows', 'wikilink')",
               (pid,))
    assert entity(engine, remote, "p/a")["card"]["edges"] == []


def test_active_fact_count_caps_at_100(engine, local):
    add_page(engine.page_db, "people/busy", "Busy")
    for i in range(105):
        engine.facts.insert(fact=f"fact {i}", kind="fact", entity_slug="people/busy", visibility="world",
                            source="t", valid_until=None)
    assert entity(engine, local, "people/busy")["card"]["active_fact_count"] == 100


def test_remote_never_sees_private_facts_in_any_field(engine, remote, local):
    db = engine.page_db
    add_page(db, "people/conformance-m", "Conformance M", type="person", lead="A person.")
    remember(engine, local, "PRIVATE-SENTINEL dentist appointment", entity="people/conformance-m",
             kind="commitment", visibility="private")
    remember(engine, remote, "public commitment", entity="people/conformance-m", kind="commitment")
    body = entity(engine, remote, "people/conformance-m")
    assert "PRIVATE-SENTINEL" not in json.dumps(body)
    assert body["card"]["active_fact_count"] == 1
    local_body = entity(engine, local, "people/conformance-m")
    assert "PRIVATE-SENTINEL" in json.dumps(local_body)
    assert local_body["card"]["active_fact_count"] == 2


def test_private_pages_never_resolve_or_appear_for_remote(engine, remote, local):
    db = engine.page_db
    add_page(db, "people/secret", "Secret Agent", visibility="private", aliases=["Bond"])
    add_page(db, "people/public", "Public Person")
    add_link(db, "people/secret", "people/public", "knows")
    add_link(db, "people/public", "people/secret", "knows")
    for name in ("people/secret", "Secret Agent", "bond", "secret"):
        body = entity(engine, remote, name)
        assert body["found"] is False, name
        assert "people/secret" not in json.dumps(body)
        assert entity(engine, local, name)["card"]["entity"]["slug"] == "people/secret"
    public = entity(engine, remote, "people/public")
    assert public["card"]["edges"] == [] and public["card"]["backlink_count"] == 0
    public_local = entity(engine, local, "people/public")
    assert {e["slug"] for e in public_local["card"]["edges"]} == {"people/secret"}
    assert public_local["card"]["backlink_count"] == 1


def test_private_page_never_runner_up_for_remote(engine, remote):
    db = engine.page_db
    add_page(db, "a/lee", "Lee")
    add_page(db, "b/lee", "Lee", visibility="private")
    body = entity(engine, remote, "Lee")
    assert body["card"]["entity"]["slug"] == "a/lee" and "suggestions" not in body


def test_remember_by_name_and_recall_by_slug_meet(engine, remote):
    db = engine.page_db
    add_page(db, "people/alice-example", "Alice Example", aliases=["Ally"])
    for name in ("Alice Example", "ally", "alice-example", "people/alice-example"):
        assert remember(engine, remote, f"note via {name}", entity=name)["entity_slug"] == "people/alice-example"
    body, _ = call(engine, "recall", {"entity": "people/alice-example"}, remote)
    assert body["total"] == 4
    body, _ = call(engine, "recall", {"entity": "Alice Example"}, remote)
    assert body["total"] == 4
    assert entity(engine, remote, "Ally")["card"]["active_fact_count"] == 4


def test_remote_canonicalization_skips_private_pages(engine, remote, local):
    add_page(engine.page_db, "people/hidden-person", "Hidden Person", visibility="private")
    assert remember(engine, remote, "x", entity="Hidden Person")["entity_slug"] == "hidden-person"
    assert remember(engine, local, "y", entity="Hidden Person")["entity_slug"] == "people/hidden-person"


def test_latency_is_an_integer_on_hit_and_miss(engine, remote):
    add_page(engine.page_db, "x/y", "Y")
    for name in ("x/y", "nope"):
        body = entity(engine, remote, name)
        assert type(body["latency_ms"]) is int and body["latency_ms"] >= 0


def _remember(engine, local, fact, entity, **extra):
    body, err = call(engine, "remember", {"fact": fact, "provenance": "test", "entity": entity, **extra}, local)
    assert not err, body


def test_an_entity_known_only_from_facts_has_a_card(engine, local, remote):
    for i in range(5):
        _remember(engine, local, f"Fact number {i} about the owner of this brain", "people/me")
    _remember(engine, local, "I will send the cut-over runbook on Friday", "people/me", kind="commitment")
    _remember(engine, local, "A private note about the owner", "people/me", visibility="private")
    body, err = call(engine, "entity", {"name": "people/me"}, local)
    assert not err
    check_entity_schema(body)
    card = body["card"]
    assert body["found"] is True and card["entity"]["slug"] == "people/me"
    assert card["active_fact_count"] == 7 and "7 active facts" in card["summary"]
    assert [t["text"] for t in card["open_threads"]] == ["I will send the cut-over runbook on Friday"]
    assert card["edges"] == [] and card["backlink_count"] == 0
    # remote callers count world facts only, and the summary carries no fact text
    body, _ = call(engine, "entity", {"name": "people/me"}, remote)
    check_entity_schema(body)
    assert body["card"]["active_fact_count"] == 6 and "private" not in json.dumps(body["card"]).lower()


def test_an_entity_with_only_private_facts_is_a_miss_for_a_remote_caller(engine, local, remote):
    _remember(engine, local, "Only the owner may see this", "people/secret-keeper", visibility="private")
    body, _ = call(engine, "entity", {"name": "people/secret-keeper"}, remote)
    check_entity_schema(body)
    assert body["found"] is False and "card" not in body
    body, _ = call(engine, "entity", {"name": "people/secret-keeper"}, local)
    assert body["found"] is True and body["card"]["active_fact_count"] == 1
