"""recall ranks facts by the query (docs/protocol.md §3.1): the facts keyword index
(FTS5 in the facts cache) alone, and fused with the fact vectors."""

from __future__ import annotations

import pytest
from conftest import call

from brain.daemon.server.vault_engine import VaultEngine
from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)


def remember(engine, caller, fact, **kw):
    body, err = call(engine, "remember", {"fact": fact, "provenance": kw.pop("provenance", "test"), **kw}, caller)
    assert not err, body
    return body["id"]


def recall(engine, caller, **args):
    body, err = call(engine, "recall", args, caller)
    assert not err, body
    return body


def ids(body) -> list[str]:
    return [f["fact_id"] for f in body["facts"]]


def filler(engine, caller, n, start=0):
    for i in range(start, start + n):
        remember(engine, caller, f"Routine status note {i}: the build is green and nothing changed")


def test_relevant_beats_recent(engine, local):
    # another provenance: the notes are not the target's neighbours (stores/fact_neighbours.py)
    target = remember(engine, local, "Caroline went to the LGBTQ support group on Tuesday", provenance="group chat")
    filler(engine, local, 60)  # all newer than the target
    body = recall(engine, local, query="When did Caroline go to the support group?", limit=5)
    assert ids(body)[0] == target
    assert body["total"] == len(body["facts"]) == 1  # the notes share no word with the question


def test_query_with_entity_ranks_inside_the_entity(engine, local):
    other = remember(engine, local, "Bob likes the red kayak best", entity="Bob")
    kayak = remember(engine, local, "Alice sold her old kayak in spring", entity="Alice")
    remember(engine, local, "Alice moved to Berlin", entity="Alice")
    remember(engine, local, "Alice plays the cello", entity="Alice")
    body = recall(engine, local, entity="Alice", query="what happened to the kayak")
    assert ids(body) == [kayak]
    assert other not in ids(recall(engine, local, entity="Alice", query="kayak"))
    # without a query the entity's facts keep their order: newest first
    plain = recall(engine, local, entity="Alice")
    assert [f["fact"] for f in plain["facts"]] == [
        "Alice plays the cello", "Alice moved to Berlin", "Alice sold her old kayak in spring"]


def test_a_query_that_matches_nothing_returns_no_facts(engine, local):
    filler(engine, local, 10)
    body = recall(engine, local, query="xylophone quartets in Reykjavik")
    assert body["facts"] == [] and body["total"] == 0
    # only stop words, or only FTS syntax: nothing to match, and no error
    assert recall(engine, local, query="what is the")["facts"] == []
    assert recall(engine, local, query='" OR * NEAR( -')["facts"] == []


def test_grep_reaches_facts_older_than_the_newest_limit(engine, local):
    old = remember(engine, local, "The spare key is under the PLANTER")
    filler(engine, local, 60)
    body = recall(engine, local, grep="planter")
    assert ids(body) == [old]
    body = recall(engine, local, grep="status note", limit=10)
    assert len(body["facts"]) == 10  # grep still honours the limit
    # grep and query together: the query ranks inside the grep's matches
    assert ids(recall(engine, local, query="where is the key", grep="planter")) == [old]


def test_remote_callers_never_see_private_facts_through_the_index(engine, local, remote):
    secret = remember(engine, local, "Zanzibar passphrase is marmalade", visibility="private", entity="Alice")
    shared = remember(engine, local, "Zanzibar trip is booked for June", entity="Alice")
    for args in ({"query": "zanzibar marmalade passphrase"}, {"query": "marmalade"},
                 {"query": "zanzibar", "entity": "Alice"}, {"query": "marmalade", "grep": "marmalade"},
                 {"query": "marmalade", "include_expired": True}):
        body = recall(engine, remote, **args)
        assert secret not in ids(body), args
        assert "marmalade" not in str(body), args
        assert body["total"] == len(body["facts"])  # no count that could betray a hidden row
    assert ids(recall(engine, remote, query="marmalade")) == []
    assert ids(recall(engine, remote, query="zanzibar")) == [shared]
    assert ids(recall(engine, local, query="marmalade")) == [secret]


def test_remember_is_searchable_at_once_and_forget_removes_at_once(engine, local):
    filler(engine, local, 5)
    fid = remember(engine, local, "The wifi password at the cabin is fjord77")
    assert ids(recall(engine, local, query="cabin wifi password")) == [fid]
    body, err = call(engine, "forget", {"id": fid}, local)
    assert not err and body["expired"] is True
    assert ids(recall(engine, local, query="cabin wifi password")) == []
    assert ids(recall(engine, local, query="cabin wifi password", include_expired=True)) == [fid]


def test_fact_dates_are_searchable_words(engine, local):
    may = remember(engine, local, "Maria ran the city race", provenance="chat 2023-05-07")
    remember(engine, local, "Maria ran along the canal", provenance="chat 2023-08-19")
    assert ids(recall(engine, local, query="what did Maria run in May 2023?"))[0] == may
    assert ids(recall(engine, local, query="Maria ran on Sunday"))[0] == may  # 2023-05-07 was a Sunday


def test_rebuilt_facts_cache_gives_the_same_answers(vault, places, local):
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        for text in ("Tom opened a bakery on Linden Street", "Tom's bakery sells rye bread",
                     "Maria trains for a half marathon", "Maria sprained her ankle"):
            remember(e, local, text)
        questions = ("where is the bakery", "Maria ankle", "rye")
        before = [ids(recall(e, local, query=q)) for q in questions]
        assert all(before)
        e.facts.rebuild()  # what `brain rebuild` runs
        assert [ids(recall(e, local, query=q)) for q in questions] == before
        db_path = e.facts.db_path
    finally:
        e.close()
    for suffix in ("", "-wal", "-shm"):  # the cache is disposable: drop it whole
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        assert [ids(recall(e, local, query=q)) for q in questions] == before
    finally:
        e.close()


def test_a_version_1_cache_is_rebuilt_with_the_index(vault, places, local):
    e = VaultEngine(vault, places, {}, writer="test")
    fid = remember(e, local, "Priya finished the lighthouse novel")
    e.facts.db.executescript("DROP TABLE facts_fts; UPDATE meta SET value = '1' WHERE key = 'schema_version';")
    e.close()
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        assert ids(recall(e, local, query="lighthouse novel")) == [fid]
    finally:
        e.close()


# -- with the embedding model -------------------------------------------------



@pytest.mark.model
def test_vectors_find_a_paraphrase_and_the_floor_keeps_out_filler(model_engine, local):
    e = model_engine
    dog = remember(e, local, "We adopted a puppy from the shelter last week")
    remember(e, local, "The quarterly report is due on Friday")
    remember(e, local, "I repainted the kitchen cabinets green")
    # no shared word: only the vector arm can find it, right after remember
    assert ids(recall(e, local, query="did we get a dog?"))[0] == dog
    assert recall(e, local, query="What is the boiling point of tungsten?")["facts"] == []


@pytest.mark.model
def test_vector_arm_hides_private_facts_from_remote_callers(model_engine, local, remote):
    e = model_engine
    secret = remember(e, local, "We adopted a puppy from the shelter last week", visibility="private")
    assert ids(recall(e, local, query="did we get a dog?")) == [secret]
    body = recall(e, remote, query="did we get a dog?")
    assert body["facts"] == [] and body["total"] == 0


def test_a_question_naming_a_day_meets_the_facts_of_that_day(engine, local):
    may = remember(engine, local, "Sam moved the sofa", provenance="moving day 2023-05-07")
    remember(engine, local, "Sam moved the piano", provenance="later 2023-06-30")
    assert ids(recall(engine, local, query="what did Sam move on 2023-05-07?"))[0] == may
    today = remember(engine, local, "Sam moved the bookcase")  # saved now: valid_from is today
    assert ids(recall(engine, local, query="what did Sam move today?"))[0] == today
