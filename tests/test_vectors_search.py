"""Hybrid recall through the real engine: vault files → indexer → MiniLM + hnswlib → recall."""

from __future__ import annotations

import threading

import pytest
from conftest import call
from indexer_fixtures import write

from brain.daemon.server.vault_engine import VaultEngine
from vectors_fixtures import minilm  # noqa: F401  (fixture)

pytestmark = pytest.mark.model

PARAPHRASE = "physician treating kids"  # no word in common with the page it must find


def seed(vault):
    write(vault, "people/maria-lopez.md",
          "---\ntitle: Maria Lopez\ntype: person\n---\n"
          "Dr. Maria Lopez is a pediatrician at Riverside Clinic who cares for young children.\n\n"
          "## Background\nShe studied in Lisbon and volunteers at the county food bank on weekends.\n")
    write(vault, "companies/orbital-ventures.md",
          "# Orbital Ventures\nOrbital Ventures funds rocket programs through a series B round.\n")
    write(vault, "projects/falcon-launch.md",
          "---\ntitle: Falcon Launch\n---\nThe project ships in spring.\n")
    write(vault, "notes/rocket-news.md",
          "# Rocket news\nThe falcon launch window moved; every falcon launch this year slipped. "
          "Falcon launch crews trained twice. Launch of the falcon booster is next.\n")
    write(vault, "notes/garden.md", "# Garden\nTomatoes and basil did well this summer.\n")
    write(vault, "private/diary.md", "---\nvisibility: private\n---\nA pediatrician appointment for the twins.\n")


def open_engine(vault, places, minilm, background=False, **kw):
    e = VaultEngine(vault, places, {}, writer="test")
    e.attach_index()
    loader = e.load_models(background=background, embedder=minilm, **kw)
    return e, loader


def recall(engine, caller, query, **extra):
    body, err = call(engine, "recall", {"query": query, **extra}, caller)
    assert not err, body
    return body


@pytest.fixture
def hybrid(vault, places, minilm):
    seed(vault)
    e, _ = open_engine(vault, places, minilm)
    yield e
    e.close()


def test_paraphrase_finds_a_page_sharing_no_word(hybrid, remote):
    body = recall(hybrid, remote, PARAPHRASE)
    assert "search_degraded" not in body
    assert body["results"][0]["slug"] == "people/maria-lopez"
    assert body["results"][0]["chunk"].startswith("Dr. Maria Lopez")
    assert "private/diary" not in [r["slug"] for r in body["results"]]  # remote callers never see it


def test_keyword_only_cannot_find_the_paraphrase(vault, places, remote):
    # the control for the test above: without vectors the page is out of reach
    seed(vault)
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.attach_index()
        body = recall(e, remote, PARAPHRASE)
        assert body["search_degraded"] == "keyword_only_no_embedding_provider"
        assert "people/maria-lopez" not in [r["slug"] for r in body["results"]]
    finally:
        e.close()


def test_exact_title_ranks_first_in_hybrid(hybrid, remote):
    body = recall(hybrid, remote, "Falcon Launch")
    first = body["results"][0]
    assert first["slug"] == "projects/falcon-launch"
    assert first["evidence"] == "exact_title_match" and first["create_safety"] == "exists"
    assert "notes/rocket-news" in [r["slug"] for r in body["results"][1:]]


def test_close_wording_is_a_high_vector_match_and_loose_wording_is_not(hybrid, remote):
    close = "Maria Lopez pediatrician at Riverside Clinic caring for young children"  # cosine ~0.95 to the chunk
    hit = recall(hybrid, remote, close)["results"][0]
    assert hit["slug"] == "people/maria-lopez"
    assert hit["evidence"] == "high_vector_match" and hit["create_safety"] == "exists"
    loose = "a children's doctor at the Riverside clinic"  # cosine ~0.6: found, but not proof of identity
    hit = recall(hybrid, remote, loose)["results"][0]
    assert hit["slug"] == "people/maria-lopez"
    assert hit["evidence"] in ("keyword_exact", "weak_semantic")


def test_keyword_only_while_the_model_loads_then_hybrid(vault, places, minilm, remote):
    seed(vault)
    gate = threading.Event()
    e, loader = open_engine(vault, places, minilm, background=True, start_after=gate)
    try:
        body = recall(e, remote, "Orbital Ventures")
        assert body["search_degraded"] == "keyword_only_no_embedding_provider"
        assert body["results"][0]["slug"] == "companies/orbital-ventures"
        assert "people/maria-lopez" not in [r["slug"] for r in recall(e, remote, PARAPHRASE)["results"]]
        gate.set()
        loader.join(timeout=60)
        assert loader.state == "ready" and e.vectors.ready
        body = recall(e, remote, PARAPHRASE)
        assert "search_degraded" not in body
        assert body["results"][0]["slug"] == "people/maria-lopez"
    finally:
        e.close()


def test_saves_deletes_and_renames_follow_without_ghosts(hybrid, vault, remote):
    e = hybrid
    write(vault, "notes/sailing.md", "# Weekend\nTake the dinghy out on the lake if the wind is calm.\n")
    e.index.apply(["notes/sailing.md"])
    assert e.vectors.wait_idle()
    assert recall(e, remote, "boat trip on the water")["results"][0]["slug"] == "notes/sailing"

    embedded = e.vectors.embedded
    (vault / "notes" / "sailing.md").rename(vault / "notes" / "boating.md")
    e.index.apply(["notes/sailing.md", "notes/boating.md"])
    assert e.vectors.wait_idle()
    assert e.vectors.embedded == embedded  # same text under a new name: no embedding
    slugs = [r["slug"] for r in recall(e, remote, "boat trip on the water")["results"]]
    assert slugs[0] == "notes/boating" and "notes/sailing" not in slugs

    (vault / "notes" / "boating.md").unlink()
    e.index.apply(["notes/boating.md"])
    assert e.vectors.wait_idle()
    slugs = [r["slug"] for r in recall(e, remote, "boat trip on the water")["results"]]
    assert "notes/boating" not in slugs and "notes/sailing" not in slugs
    hashes = {r[0] for r in e.page_db.execute("SELECT DISTINCT hash FROM chunks")}
    assert len(e.vectors) == len(hashes)  # the vector left the index too


def test_restart_reembeds_nothing(vault, places, minilm, remote):
    seed(vault)
    e, _ = open_engine(vault, places, minilm)
    first = e.vectors.embedded
    assert first > 0
    e.close()
    texts = minilm.texts
    e, _ = open_engine(vault, places, minilm)
    try:
        assert e.vectors.embedded == 0 and minilm.texts - texts == 0
        assert recall(e, remote, PARAPHRASE)["results"][0]["slug"] == "people/maria-lopez"
    finally:
        e.close()
