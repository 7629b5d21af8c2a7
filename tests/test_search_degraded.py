"""A keyword-only search keeps the protocol's one `search_degraded` value and
says the true cause in `search_degraded_cause` (docs/protocol.md §3.1, §9 item 13)."""

from __future__ import annotations

import threading

import pytest
from conftest import call
from indexer_fixtures import write

from brain.daemon.server.vault_engine import VaultEngine
from brain.indexer.embeddings.search_modes import CAUSE_TEXT, KEYWORD_ONLY, degraded_text
from vectors_fixtures import minilm  # noqa: F401  (fixture)


def seed(vault):
    write(vault, "companies/orbital-ventures.md",
          "# Orbital Ventures\nOrbital Ventures funds rocket programs through a series B round.\n")
    for i in range(12):  # enough chunks for the vector build to take more than one batch
        write(vault, f"notes/note-{i}.md", f"# Note {i}\nA note about topic number {i} and nothing else.\n")


def recall(engine, caller, query):
    body, err = call(engine, "recall", {"query": query}, caller)
    assert not err, body
    return body


def test_without_a_model_in_this_process_the_cause_says_so(vault, places, remote):
    seed(vault)
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.attach_index()
        body = recall(e, remote, "Orbital Ventures")
        assert body["search_degraded"] == KEYWORD_ONLY
        assert body["search_degraded_cause"] == "model_not_loaded"
        assert body["results"][0]["slug"] == "companies/orbital-ventures"
        search, err = call(e, "search", {"query": "Orbital"}, remote)
        assert not err and search["search_degraded_cause"] == "model_not_loaded"
    finally:
        e.close()


def test_embeddings_off_is_its_own_cause(vault, places, remote):
    seed(vault)
    e = VaultEngine(vault, places, {"embeddings.enabled": False}, writer="test")
    try:
        e.attach_index()
        e.load_models()
        body = recall(e, remote, "Orbital Ventures")
        assert (body["search_degraded"], body["search_degraded_cause"]) == (KEYWORD_ONLY, "embeddings_off")
    finally:
        e.close()


def test_no_page_index_is_not_called_a_missing_model(engine, remote):
    body = recall(engine, remote, "anything")
    assert body["results"] == [] and body["search_degraded"] == KEYWORD_ONLY
    assert body["search_degraded_cause"] == "index_not_open"


@pytest.mark.model
def test_a_loaded_model_with_vectors_still_building_says_vectors_building(vault, places, minilm, remote):
    seed(vault)
    start, first_batch, release = threading.Event(), threading.Event(), threading.Event()

    def hold_after_first_batch(done, total):
        first_batch.set()
        release.wait(60)

    e = VaultEngine(vault, places, {}, writer="test")
    e.attach_index()
    loader = e.load_models(background=True, embedder=minilm, start_after=start,
                           progress=hold_after_first_batch)
    try:
        assert recall(e, remote, "Orbital Ventures")["search_degraded_cause"] == "model_loading"
        start.set()
        assert first_batch.wait(60)
        assert loader.state == "ready" and e.embedder is not None and not e.vectors.ready
        body = recall(e, remote, "Orbital Ventures")
        assert body["search_degraded"] == KEYWORD_ONLY  # the protocol's fixed value stays
        assert body["search_degraded_cause"] == "vectors_building"  # …and the cause is not the model
        release.set()
        loader.join(timeout=60)
        assert e.vectors.ready
        body = recall(e, remote, "Orbital Ventures")
        assert "search_degraded" not in body and "search_degraded_cause" not in body
    finally:
        release.set()
        start.set()
        loader.join(timeout=60)
        e.close()


def test_a_person_reads_the_cause_not_the_wire_value():
    assert degraded_text({}) is None
    assert degraded_text({"search_degraded": KEYWORD_ONLY, "search_degraded_cause": "vectors_building"}) == \
        CAUSE_TEXT["vectors_building"]
    assert "still being built" in CAUSE_TEXT["vectors_building"]
    # an answer from a server that names no cause claims none either
    assert "not ready" in degraded_text({"search_degraded": KEYWORD_ONLY})
