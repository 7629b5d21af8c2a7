"""The model on the hot path: remember's answers (docs/protocol.md §3.2) stay what they
were while the model left its critical path (it embeds only where dedup compares, and stores
the new fact's vector after answering: indexer/embeddings/fact_vectors.py `store_later`), a
recall's one embedding (by the int8 query model) runs beside its keyword work (`prefetch`), a
text is never embedded twice, and an entity miss embeds nothing (its near misses are a keyword search, §3.3)."""

from __future__ import annotations

import brain.daemon.verbs.recall as recall_verb
from brain.indexer.vault.visibility import Viewer
import threading

import pytest

from conftest import call
from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)

pytestmark = pytest.mark.model

ARGS = {"provenance": "t", "entity": "people/zed"}


def test_every_answer_of_remember_is_what_it_was(model_engine, local):
    # (fact, kind, the status remember answered before the model left its critical path)
    steps = [
        ("Zed works at Acme Robotics in Berlin", "fact", "inserted"),
        ("Zed works at Acme Robotics in Berlin", "fact", "duplicate"),     # the same text
        ("Zed works at Acme Robotics, Berlin", "fact", "superseded"),      # same claim, same kind
        ("Zed works at Acme Robotics, Berlin.", "belief", "duplicate"),    # same claim, another kind
        ("Zed prefers tea to coffee", "preference", "inserted"),           # another claim
        ("Zed prefers  tea to coffee", "preference", "duplicate"),         # differs in spacing only
    ]
    bodies = []
    for fact, kind, _ in steps:
        body, err = call(model_engine, "remember", {**ARGS, "fact": fact, "kind": kind}, local)
        assert not err and "degraded_dedup" not in body, body
        bodies.append(body)
    assert [b["status"] for b in bodies] == [s for _, _, s in steps]
    # what superseded what is unchanged too: the first fact points at the third answer's,
    # and the duplicates name the fact they matched
    first = model_engine.facts.get(int(bodies[0]["id"]), Viewer.owner())
    assert first["superseded_by"] == int(bodies[2]["id"]) and first["expired_at"] is not None
    assert bodies[1]["id"] == bodies[0]["id"] and bodies[3]["id"] == bodies[2]["id"]
    assert bodies[5]["id"] == bodies[4]["id"]


def test_a_remembered_fact_is_embedded_once(model_engine, local):
    fv = model_engine.fact_vectors
    call(model_engine, "remember", {**ARGS, "fact": "Zed likes green tea"}, local)
    assert fv.wait_written()
    before = fv.embedded
    # compared with the fact above (no number, date or name tells them apart), then stored:
    # one embedding of the new text
    body, _ = call(model_engine, "remember", {**ARGS, "fact": "Zed drinks black coffee"}, local)
    assert body["status"] == "inserted"
    assert fv.wait_written()
    assert fv.embedded == before + 1


def _stored_ids(engine) -> set[int]:
    with engine.facts.lock:
        return {r[0] for r in engine.facts.db.execute("SELECT id FROM fact_vectors")}


def test_remember_answers_before_the_vector_is_stored_and_a_recall_right_after_finds_it(model_engine, local):
    fv = model_engine.fact_vectors
    gate = threading.Event()
    fv._writer.submit(gate.wait, 60)  # the writer is busy: nothing handed to it is stored yet
    try:
        body, err = call(model_engine, "remember", {**ARGS, "fact": "Zed plays the violin in an orchestra"}, local)
        assert not err and body["status"] == "inserted", body
        fid = int(body["id"])
        assert fid not in _stored_ids(model_engine) and fv.pending() == {fid: "Zed plays the violin in an orchestra"}
        # no word in common with the fact: only its vector can find it
        body, err = call(model_engine, "recall", {"query": "violinist orchestral musician", "limit": 5}, local)
        assert not err and [f["id"] for f in body["facts"]] == [fid], body
        assert fid not in _stored_ids(model_engine)
    finally:
        gate.set()
    assert fv.wait_written() and fid in _stored_ids(model_engine)


def test_a_fact_that_differs_in_a_specific_from_every_candidate_waits_for_no_embedding(model_engine, local, minilm):
    fv = model_engine.fact_vectors
    first, _ = call(model_engine, "remember", {**ARGS, "fact": "Zed has a dentist appointment on 2026-12-10"}, local)
    assert fv.wait_written()
    gate = threading.Event()
    fv._writer.submit(gate.wait, 60)
    try:
        before = minilm.texts
        # cosine 0.99 to the first, but another date: another fact whatever the cosine says
        body, err = call(model_engine, "remember",
                         {**ARGS, "fact": "Zed has a dentist appointment on 2026-12-17"}, local)
        assert not err and body["status"] == "inserted" and body["id"] != first["id"], body
        assert minilm.texts == before  # answered without the model
    finally:
        gate.set()
    assert fv.wait_written()
    assert model_engine.facts.get(int(first["id"]), Viewer.owner())["expired_at"] is None


def test_a_prefetched_text_is_waited_for_not_embedded_again(model_engine, minilm):
    fv = model_engine.fact_vectors
    texts_before = minilm.texts
    fv.prefetch("who leads  the billing migration?")
    a = fv.vector("who leads the billing migration?")   # the same tokens
    b = fv.vector("who leads the billing migration? ")
    assert minilm.texts == texts_before + 1
    assert (a == b).all() and abs(float(a @ a) - 1.0) < 1e-4


def test_a_recall_embeds_its_query_once_for_both_arms(model_engine, local, minilm):
    call(model_engine, "remember", {**ARGS, "fact": "Zed leads the billing migration"}, local)
    assert model_engine.fact_vectors.wait_written()  # the fact's own embedding is not the query's
    before, light_before = minilm.texts, minilm.for_queries.texts
    body, err = call(model_engine, "recall", {"query": "who is  leading billing?", "limit": 5}, local)
    assert not err and any("billing" in f["fact"] for f in body["facts"]), body
    assert minilm.for_queries.texts == light_before + 1 and minilm.texts == before


def test_an_entity_miss_embeds_nothing_and_still_suggests(model_engine, local, minilm):
    page = model_engine.vault / "people" / "zed-example.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Zed Example\n---\n# Zed Example\n\nZed leads the billing migration.\n")
    model_engine.attach_index()
    assert model_engine.vectors.wait_idle()  # the page's chunk is embedded by the build, not by the miss
    before = minilm.texts
    body, err = call(model_engine, "entity", {"name": "Zed Exampel billing"}, local)
    assert not err and body["found"] is False, body
    assert [s["slug"] for s in body["suggestions"]] == ["people/zed-example"], body
    assert minilm.texts == before


def test_a_recall_runs_its_arms_on_its_own_thread_and_answers_the_same_with_the_prefetch_busy(
        model_engine, local, monkeypatch):
    call(model_engine, "remember", {**ARGS, "fact": "Zed leads the billing migration"}, local)
    fv = model_engine.fact_vectors
    assert fv.wait_written()
    arm_threads: list[str] = []
    real_arm = recall_verb.facts_arm

    def watched(*a, **kw):
        arm_threads.append(threading.current_thread().name)
        return real_arm(*a, **kw)

    monkeypatch.setattr(recall_verb, "facts_arm", watched)
    question = "who runs the billing move?"
    prefetched, err = call(model_engine, "recall", {"query": question, "limit": 5}, local)
    assert not err
    # every prefetch thread is taken: a prefetch does not queue behind them, and the recall
    # embeds its query itself, once
    queries = fv.queries
    gates = [threading.Event() for _ in range(2)]
    with queries._recent_lock:
        pools = [queries._pool() for _ in gates]
    for pool, gate in zip(pools, gates):
        queries._submit(pool, gate.wait, 60)
    fv.prefetch_query("a text nobody waits for")
    assert queries.tasks == 2
    with queries._recent_lock:
        queries._recent.clear()
    light = model_engine.embedder.for_queries
    before = light.texts
    try:
        inline, err = call(model_engine, "recall", {"query": question, "limit": 5}, local)
        assert not err
    finally:
        for g in gates:
            g.set()
    assert light.texts == before + 1
    assert arm_threads == [threading.current_thread().name] * 2
    assert [f["id"] for f in inline["facts"]] == [f["id"] for f in prefetched["facts"]] != []
    assert [r["slug"] for r in inline["results"]] == [r["slug"] for r in prefetched["results"]]


def test_a_recall_query_starts_embedding_before_the_call_reaches_a_worker_thread(model_engine, local, minilm):
    from brain.daemon.server.mcp import engine_dispatcher

    call_fn = engine_dispatcher(model_engine)
    fv = model_engine.fact_vectors
    light = minilm.for_queries   # a query is embedded by the query model (query_model.py)
    before, full_before = light.texts, minilm.texts
    for name, args in (("recall", {"query": 5}), ("recall", "who"), ("recall", {"query": "  "}),
                       ("entity", {"name": "who leads billing"}), ("recall", None)):
        call_fn.start_early(name, args)  # not a query to embed: nothing happens, nothing raises
    call_fn.start_early("recall", {"query": " who leads  billing? "})
    body, err = call_fn("recall", {"query": "who leads billing?", "limit": 5}, local)
    assert not err, body
    assert light.texts == before + 1  # the early start's embedding is the one the recall used
    assert fv.query_vector("who leads billing?") is not None and light.texts == before + 1
    assert minilm.texts == full_before   # and the full model embedded nothing
