"""remember's similarity dedup and supersession (docs/protocol.md §3.2) with the real model."""

from __future__ import annotations

from brain.indexer.vault.visibility import Viewer

import threading

import pytest
from conftest import call

from brain.daemon.server.vault_engine import VaultEngine
from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)

pytestmark = pytest.mark.model




def remember(engine, caller, fact, entity="Alice", kind=None):
    args = {"fact": fact, "provenance": "test chat"}
    if entity:
        args["entity"] = entity
    if kind:
        args["kind"] = kind
    body, err = call(engine, "remember", args, caller)
    assert not err, body
    return body


def test_near_duplicate_same_kind_supersedes(model_engine, local):
    # a restatement; a change of number, date or name is a new fact (tests/test_supersession_specifics.py)
    first = remember(model_engine, local, "Alice prefers morning meetings")
    assert first["status"] == "inserted" and "degraded_dedup" not in first
    second = remember(model_engine, local, "Alice prefers meetings in the morning")
    assert second["status"] == "superseded"
    assert second["id"] != first["id"]
    assert second["status_text"] == f"updated — fact #{second['id']} supersedes the previous version"
    old = model_engine.facts.get(int(first["id"]), Viewer.owner())
    assert old["expired_at"] is not None and old["superseded_by"] == int(second["id"])
    body, _ = call(model_engine, "recall", {"supersessions": True}, local)
    assert [f["id"] for f in body["facts"]] == [int(first["id"])]
    body, _ = call(model_engine, "recall", {"entity": "Alice"}, local)
    assert [f["fact"] for f in body["facts"]] == ["Alice prefers meetings in the morning"]


def test_near_duplicate_of_another_kind_is_a_duplicate(model_engine, local):
    first = remember(model_engine, local, "Alice prefers morning meetings", kind="preference")
    again = remember(model_engine, local, "Alice prefers meetings in the morning", kind="fact")
    assert again["status"] == "duplicate"
    assert again["id"] == first["id"]
    assert model_engine.facts.counts(Viewer.owner())["facts"] == 1  # nothing written


def test_same_text_is_a_duplicate(model_engine, local):
    first = remember(model_engine, local, "Alice prefers morning meetings")
    again = remember(model_engine, local, "alice  prefers MORNING meetings")
    assert again["status"] == "duplicate" and again["id"] == first["id"]


def test_related_but_different_claims_both_insert(model_engine, local):
    a = remember(model_engine, local, "Alice lives in Berlin")
    b = remember(model_engine, local, "Alice is allergic to peanuts")
    c = remember(model_engine, local, "Alice lives in Munich")  # cosine ~0.85 with Berlin: below 0.95
    assert [a["status"], b["status"], c["status"]] == ["inserted"] * 3
    assert model_engine.facts.counts(Viewer.owner())["active_facts"] == 3


def test_no_entity_is_never_deduped(model_engine, local):
    a = remember(model_engine, local, "The office wifi password is hunter2", entity=None)
    b = remember(model_engine, local, "The office wifi password is hunter3", entity=None)
    assert (a["status"], b["status"]) == ("inserted", "inserted")
    assert "degraded_dedup" not in b
    # both stay (only entity facts are ever compared) and both get a vector: recall searches them
    assert model_engine.facts.counts(Viewer.owner())["active_facts"] == 2
    assert model_engine.fact_vectors.wait_written()  # stored after remember answered
    assert model_engine.fact_vectors.count() == 2


def test_other_entities_are_not_candidates(model_engine, local):
    remember(model_engine, local, "Alice prefers morning meetings")
    other = remember(model_engine, local, "Bob's phone number is 555-0100", entity="Bob")
    assert other["status"] == "inserted"


def test_facts_saved_while_loading_are_embedded_when_ready(vault, places, minilm, local):
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        gate = threading.Event()
        loader = e.load_models(background=True, start_after=gate, embedder=minilm)
        early = remember(e, local, "Alice prefers morning meetings")
        assert early["degraded_dedup"] is True  # the model is not there yet: §3.2's flag
        assert loader.state in ("idle", "loading")
        gate.set()
        loader.join(timeout=60)
        assert loader.state == "ready" and e.vectors.ready
        assert e.fact_vectors.count() == 1  # the backfill embedded the early fact
        later = remember(e, local, "Alice prefers meetings in the morning")
        assert later["status"] == "superseded" and "degraded_dedup" not in later
    finally:
        e.close()


def test_a_vector_not_yet_written_at_stop_is_made_at_the_next_start(vault, places, minilm, local):
    e = VaultEngine(vault, places, {}, writer="test")
    e.load_models(background=False, embedder=minilm)
    gate = threading.Event()
    e.fact_vectors._writer.submit(gate.wait, 60)  # the writer is busy when the daemon stops
    fid = int(remember(e, local, "Alice keeps bees on her roof")["id"])
    threading.Timer(0.2, gate.set).start()
    e.close()  # the queued write is dropped, not waited for
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        with e.facts.lock:
            assert e.facts.db.execute("SELECT COUNT(*) FROM fact_vectors WHERE id = ?", [fid]).fetchone()[0] == 0
        e.load_models(background=False, embedder=minilm)
        assert [hit for hit, _ in e.fact_vectors.search("beekeeping hobby", 1)] == [fid]
        with e.facts.lock:
            assert e.facts.db.execute("SELECT COUNT(*) FROM fact_vectors WHERE id = ?", [fid]).fetchone()[0] == 1
    finally:
        e.close()


def test_rebuilt_facts_cache_gets_its_vectors_back(vault, places, minilm, local):
    e = VaultEngine(vault, places, {}, writer="test")
    e.load_models(background=False, embedder=minilm)
    first = remember(e, local, "Alice prefers morning meetings")
    remember(e, local, "Alice lives in Berlin")
    remember(e, local, "Unattached note", entity=None)
    db_path = e.facts.db_path
    e.close()
    for suffix in ("", "-wal", "-shm"):  # the cache is disposable: drop it whole
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)

    e = VaultEngine(vault, places, {}, writer="test")
    try:
        assert e.facts.counts(Viewer.owner())["facts"] == 3  # same facts, same ids, from the log
        texts = minilm.texts
        e.load_models(background=False, embedder=minilm)
        assert e.fact_vectors.count() == 3  # every active fact: recall searches them all
        assert minilm.texts - texts == 3
        again = remember(e, local, "Alice prefers meetings in the morning")
        assert again["status"] == "superseded"
        assert e.facts.get(int(first["id"]), Viewer.owner())["superseded_by"] == int(again["id"])
    finally:
        e.close()


def test_vectors_from_another_model_are_not_trusted(model_engine, local):
    first = remember(model_engine, local, "Alice prefers morning meetings")
    with model_engine.facts.lock:  # as if written by an older model
        model_engine.facts.db.execute("UPDATE fact_vectors SET model='old-model 0', vec=zeroblob(1536)")
    second = remember(model_engine, local, "Alice prefers meetings in the morning")
    assert second["status"] == "superseded"  # a zero vector would have scored 0 and inserted
    assert model_engine.facts.get(int(first["id"]), Viewer.owner())["superseded_by"] == int(second["id"])


def test_embeddings_disabled_keeps_dedup_degraded(vault, places, local):
    e = VaultEngine(vault, places, {"embeddings.enabled": False}, writer="test")
    try:
        loader = e.load_models(background=True)
        assert loader.state == "off" and e.embedder is None
        body = remember(e, local, "Alice prefers morning meetings")
        assert body["degraded_dedup"] is True
    finally:
        e.close()


def test_the_engines_vectors_are_the_vector_store_contracts(model_engine):
    from brain.daemon.stores.vectors import FactVectorsStore, VectorsStore

    assert isinstance(model_engine.fact_vectors, FactVectorsStore)
    assert isinstance(model_engine.vectors, VectorsStore)
