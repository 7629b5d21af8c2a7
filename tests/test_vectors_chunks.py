"""ChunkVectors with the real MiniLM model, real SQLite page tables and hnswlib."""

from __future__ import annotations

import json

import pytest

from brain.indexer.pages.db import open_db
from brain.indexer.embeddings.vector_files import SIDECAR
from brain.indexer.embeddings.vectors import ChunkVectors
from brain.indexer.pages.chunk_rows import ChunkRows
from vectors_fixtures import ChunkTable, minilm  # noqa: F401  (minilm is a fixture)

pytestmark = pytest.mark.model

PAGES = {
    "people/maria-lopez": ["Dr. Maria Lopez is a pediatrician at Riverside Clinic who cares for young children.",
                           "She studied in Lisbon and volunteers at the county food bank on weekends."],
    "companies/orbital": ["Orbital Ventures funds the Falcon launch program through a series B round."],
    "notes/garden": ["Quarterly gardening notes: tomatoes and basil did well this summer."],
    "projects/billing": ["The team migrated the billing service from Postgres to SQLite.",
                         "Rollout finished in March without downtime."],
}


@pytest.fixture
def table(tmp_path):
    db = open_db(tmp_path / "cache" / "index.sqlite")
    t = ChunkTable(db)
    for slug, chunks in PAGES.items():
        t.put_page(slug, chunks)
    yield t
    db.close()


def open_vectors(table, tmp_path, embedder, **kw) -> ChunkVectors:
    v = ChunkVectors(ChunkRows(table.db), tmp_path / "cache", embedder, **kw)
    v.build()
    return v


def top_pages(table, vectors, embedder, query, k=3):
    hits = vectors.query(embedder.embed([query])[0], k)
    return [table.page_of(cid) for cid, _ in hits], hits


def test_paraphrase_without_shared_words_finds_the_page(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    try:
        assert v.ready
        pages, hits = top_pages(table, v, minilm, "physician treating kids")
        assert pages[0] == "people/maria-lopez"
        assert hits[0][1] > hits[1][1]  # best first, cosines descending
        pages, _ = top_pages(table, v, minilm, "who pays for the rocket")
        assert pages[0] == "companies/orbital"
    finally:
        v.close()


def test_restart_embeds_nothing_and_serves_the_same(table, tmp_path, minilm):
    seen = []
    v = ChunkVectors(ChunkRows(table.db), tmp_path / "cache", minilm)
    v.build(progress=lambda done, total: seen.append((done, total)))
    n = len(table.distinct_hashes())
    assert v.embedded == n and len(v) == n
    assert seen[0] == (0, n) and seen[-1] == (n, n)
    before = v.query(minilm.embed(["physician treating kids"])[0], 3)
    v.close()

    texts_before = minilm.texts
    again = open_vectors(table, tmp_path, minilm)
    try:
        assert again.embedded == 0
        assert minilm.texts == texts_before  # not one text went through the model
        after = again.query(minilm.embed(["physician treating kids"])[0], 3)
        assert [c for c, _ in after] == [c for c, _ in before]
    finally:
        again.close()


def test_model_change_discards_and_reembeds(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    v.close()
    side = tmp_path / "cache" / SIDECAR
    meta = json.loads(side.read_text())
    meta["model"] = "some-older-model@1"
    side.write_text(json.dumps(meta))

    again = open_vectors(table, tmp_path, minilm)
    try:
        n = len(table.distinct_hashes())
        assert again.embedded == n  # everything re-embedded with the current model
        assert json.loads(side.read_text())["model"] == minilm.model_id
        assert len(list((tmp_path / "cache").glob("vectors-*.hnsw"))) == 1
    finally:
        again.close()


def test_dimension_change_discards(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    v.close()
    side = tmp_path / "cache" / SIDECAR
    meta = json.loads(side.read_text())
    meta["dim"] = 768
    side.write_text(json.dumps(meta))
    again = open_vectors(table, tmp_path, minilm)
    try:
        assert again.embedded == len(table.distinct_hashes())
    finally:
        again.close()


def test_live_changes_add_delete_rename_leave_no_ghosts(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    v.start()
    try:
        # a new page becomes findable
        v.on_chunks_changed(*table.put_page("notes/sailing", ["Weekend plan: take the dinghy out on the lake if the wind is calm."]))
        assert v.wait_idle()
        pages, _ = top_pages(table, v, minilm, "boat trip on the water")
        assert pages[0] == "notes/sailing"

        # a rename re-creates chunk rows with the same text: no embedding, new ids served
        embedded = v.embedded
        v.on_chunks_changed(*table.rename("notes/sailing", "notes/boating"))
        assert v.wait_idle()
        assert v.embedded == embedded
        pages, hits = top_pages(table, v, minilm, "boat trip on the water")
        assert pages[0] == "notes/boating"
        assert "notes/sailing" not in pages
        assert all(table.page_of(c) is not None for c, _ in hits)  # every id is a live chunk

        # a delete takes the vector out of the index, not just out of the answers
        v.on_chunks_changed(*table.delete_page("notes/boating"))
        assert v.wait_idle()
        pages, _ = top_pages(table, v, minilm, "boat trip on the water", k=10)
        assert "notes/boating" not in pages
        assert len(v) == len(table.distinct_hashes())

        # an edit embeds the new text once and retires the old vector (its slot is reused)
        v.on_chunks_changed(*table.put_page("notes/garden", ["Compost bins need turning every two weeks."]))
        assert v.wait_idle()
        assert v.embedded == embedded + 1
        assert len(v) == len(table.distinct_hashes())
        assert v.stats()["deleted_slots"] == 1  # the sailing text's slot went to the compost text
    finally:
        v.close()

    # after a restart the deletions hold
    again = open_vectors(table, tmp_path, minilm)
    try:
        assert again.embedded == 0
        assert len(again) == len(table.distinct_hashes())
        pages, _ = top_pages(table, again, minilm, "boat trip on the water", k=10)
        assert "notes/boating" not in pages and "notes/sailing" not in pages
    finally:
        again.close()


def test_changes_missed_while_stopped_are_reconciled_on_build(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    v.close()
    table.delete_page("notes/garden")                       # no callback: the daemon was down
    table.put_page("notes/chess", ["Opening repertoire: Sicilian defence as black."])
    again = open_vectors(table, tmp_path, minilm)
    try:
        assert again.embedded == 1
        assert len(again) == len(table.distinct_hashes())
        pages, _ = top_pages(table, again, minilm, "tomatoes and basil", k=10)
        assert "notes/garden" not in pages
    finally:
        again.close()


def test_chunks_sharing_a_text_share_one_vector(table, tmp_path, minilm):
    boiler = "Meeting cadence: weekly sync on Tuesdays with the whole group."
    table.put_page("projects/alpha", [boiler])
    table.put_page("projects/beta", [boiler])
    v = open_vectors(table, tmp_path, minilm)
    try:
        assert v.embedded == len(table.distinct_hashes())
        hits = v.query(minilm.embed(["weekly team meeting schedule"])[0], 1)
        assert sorted(table.page_of(c) for c, _ in hits) == ["projects/alpha", "projects/beta"]
        assert hits[0][1] == hits[1][1]
    finally:
        v.close()


def test_growth_resizes_and_k_beyond_size_is_safe(table, tmp_path, minilm):
    for i in range(40):
        table.put_page(f"notes/n{i}", [f"Note number {i} about topic {i % 7} and item {i * 3}."])
    v = open_vectors(table, tmp_path, minilm, capacity=8)  # small: the build must resize_index
    try:
        assert len(v) == len(table.distinct_hashes())
        hits = v.query(minilm.embed(["note about a topic"])[0], 500)
        assert len(hits) == len(v) == len({c for c, _ in hits})  # every content once, k clamped
    finally:
        v.close()


def test_save_is_a_sidecar_naming_one_graph(table, tmp_path, minilm):
    v = open_vectors(table, tmp_path, minilm)
    v.close()
    cache = tmp_path / "cache"
    meta = json.loads((cache / SIDECAR).read_text())
    graphs = sorted(p.name for p in cache.glob("vectors-*.hnsw"))
    assert graphs == [meta["index_file"]]
    assert meta["model"] == minilm.model_id and meta["dim"] == 384
    assert not list(cache.glob(".vectors-*"))  # no temp files left behind
    # a damaged graph is re-embedded, not served
    (cache / meta["index_file"]).write_bytes(b"not an index")
    again = open_vectors(table, tmp_path, minilm)
    try:
        assert again.embedded == len(table.distinct_hashes())
    finally:
        again.close()
