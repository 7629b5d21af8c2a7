"""Chunk vectors in PostgreSQL (daemon/postgres/chunk_vectors.py) on a real server with
pgvector and the daemon's real MiniLM: the VectorsStore contract, following the vault
indexer's commits, a front end without a model, and the store's hybrid search over them."""

from __future__ import annotations

import os

import pytest

from indexer_fixtures import write
from vectors_fixtures import minilm  # noqa: F401  (a fixture)

psycopg = pytest.importorskip("psycopg")

PAGES = {
    "people/maria-lopez.md": "# Maria Lopez\n\nMaria is a pediatrician at the city hospital.\n",
    "companies/orbital.md": "# Orbital\n\nOrbital builds launch vehicles; its investors fund the rockets.\n",
    "notes/garden.md": "# Garden\n\nQuarterly gardening notes: tomatoes and basil did well this summer.\n",
}


@pytest.fixture
def loaded(vault, pg_dsn, minilm):  # noqa: F811
    """(vault, indexer, chunk vectors built and following the indexer)."""
    from brain.daemon.postgres.chunk_vectors import PgChunkVectors
    from brain.daemon.postgres.indexer import PgVaultIndexer

    for rel, text in PAGES.items():
        write(vault, rel, text)
    indexer = PgVaultIndexer(vault, pg_dsn)
    indexer.reconcile()
    vectors = PgChunkVectors(pg_dsn, minilm)
    indexer.on_chunks_changed.append(vectors.on_chunks_changed)
    vectors.build()
    vectors.start()
    yield vault, indexer, vectors
    vectors.close()
    indexer.close()


def page_of(dsn, chunk_id):
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT p.slug FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.id = %s",
                            (chunk_id,)).fetchone()[0]


def test_every_chunk_gets_a_vector_and_a_paraphrase_finds_its_page(loaded, pg_dsn, minilm):  # noqa: F811
    from brain.daemon.stores.vectors import VectorsStore

    _, _, vectors = loaded
    assert isinstance(vectors, VectorsStore) and vectors.ready
    stats = vectors.stats()
    assert stats["pending"] == 0 and stats["vectors"] == vectors.embedded > 0
    hits = vectors.query(minilm.embed(["physician treating kids"])[0], 3)
    assert page_of(pg_dsn, hits[0][0]) == "people/maria-lopez"
    assert [c for _, c in hits] == sorted((c for _, c in hits), reverse=True) and hits[-1][1] > 0


def test_vectors_follow_the_indexer_and_unchanged_chunks_keep_theirs(loaded, pg_dsn, minilm):  # noqa: F811
    vault, indexer, vectors = loaded
    before = vectors.embedded
    write(vault, "notes/garden.md", PAGES["notes/garden.md"] + "\n## Pests\n\nAphids ate the roses.\n")
    indexer.apply(["notes/garden.md"])
    assert vectors.wait_idle(30)
    assert vectors.embedded == before + 1          # only the new section; the rest kept their vectors
    assert vectors.stats()["pending"] == 0
    hits = vectors.query(minilm.embed(["insects damaging flowers"])[0], 1)
    assert page_of(pg_dsn, hits[0][0]) == "notes/garden"
    # a copy of a page's text takes the vector already made for it, without the model
    write(vault, "notes/garden-copy.md", PAGES["notes/garden.md"])
    indexer.apply(["notes/garden-copy.md"])
    assert vectors.wait_idle(30)
    assert vectors.stats()["pending"] == 0 and vectors.embedded == before + 1   # all its texts had vectors
    os.remove(vault / "notes/garden.md")
    indexer.apply(["notes/garden.md"])
    assert all(page_of(pg_dsn, cid) != "notes/garden"
               for cid, _ in vectors.query(minilm.embed(["insects damaging flowers"])[0], 10))


def test_a_front_end_without_a_model_queries_and_reads_readiness_from_the_database(loaded, pg_dsn, minilm):  # noqa: F811
    from brain.daemon.postgres.chunk_vectors import BUILT_KEY, PgChunkVectors

    vault, indexer, vectors = loaded
    fronts = []

    def front_end(model_id=minilm.model_id):
        fronts.append(PgChunkVectors(pg_dsn, None, model_id=model_id))
        return fronts[-1]

    try:
        front = front_end()
        assert front.ready
        assert front.query(minilm.embed(["rocket investors"])[0], 1)[0][0] == \
            vectors.query(minilm.embed(["rocket investors"])[0], 1)[0][0]
        assert not front_end("another-model@1").ready   # another model's vectors answer nothing
        with pytest.raises(RuntimeError, match="without a model"):
            front.build()
        # never built over every chunk: not ready, until the indexer's vectors are built again
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DELETE FROM index_meta WHERE key = %s", (BUILT_KEY,))
        assert not front_end().ready
        vectors.build()
        assert front_end().ready
        # built once, a new chunk still waiting for its vector does not turn the vector arm off
        vectors.close()
        write(vault, "notes/new.md", "# New\n\nSomething never said before.\n")
        indexer.apply(["notes/new.md"])
        assert front_end().ready and front_end().stats()["pending"] > 0
    finally:
        for f in fronts:
            f.close()


def test_the_store_searches_by_meaning_once_the_vectors_are_ready(loaded, pg_dsn, minilm):  # noqa: F811
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.embeddings.search_modes import KEYWORD_ONLY
    from brain.indexer.vault.visibility import Viewer

    vault, _, vectors = loaded
    store = PgPagesStore(pg_dsn, vault)
    try:
        hits, degraded = store.search("physician treating kids", 3, Viewer.world(), embedder=minilm, vectors=vectors)
        assert degraded is None and hits[0]["slug"] == "people/maria-lopez" and hits[0]["stale"] is False
        hits, degraded = store.search("physician treating kids", 3, Viewer.world())
        assert degraded == KEYWORD_ONLY and all(h["slug"] != "people/maria-lopez" for h in hits)
    finally:
        store.close()
