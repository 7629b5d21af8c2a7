"""A front end's engine over PostgreSQL with the real model: hybrid recall from the chunk
vectors the indexer wrote, and remember's dedup over the store's fact vectors
(daemon/server/store_engine.py; docs/scaling.md, "A team brain on PostgreSQL")."""

from __future__ import annotations

from conftest import call
from daemon_fixtures import write_vault
from vectors_fixtures import minilm  # noqa: F401  (a fixture)

from brain.daemon.server.store_engine import StoreEngine, store_label
from brain.daemon.postgres.open_store import IndexerParts, open_store


def test_a_front_end_ranks_by_meaning_and_dedups_across_front_ends(tmp_path, places, pg_dsn, minilm, remote):  # noqa: F811
    vault = write_vault(tmp_path / "vault")
    indexer = IndexerParts(vault, pg_dsn)
    try:
        indexer.pages.reconcile()
        stats = indexer.embed(minilm)
        assert stats["vectors"] > 0 and stats["embedded"] > 0
    finally:
        indexer.close()

    engines = []
    for _ in range(2):   # two front ends on one database
        parts = open_store(pg_dsn)
        engine = StoreEngine(places, {}, label=store_label("postgresql://team@db/brain"), facts=parts.facts,
                             pages=parts.pages, cursors=parts.cursors, chunk_vectors=parts.chunk_vectors,
                             fact_shelf=parts.fact_shelf, closers=(parts.close,))
        engine.load_models(background=False, embedder=minilm)
        engines.append(engine)
    a, b = engines
    try:
        body, err = call(a, "recall", {"query": "someone who constructs things"}, remote)
        assert not err, body
        assert "search_degraded" not in body, body      # the vectors took part
        assert any(p["slug"] == "people/bob" for p in body["results"]), body["results"]
        first, err = call(a, "remember", {"fact": "Bob Builder drinks his coffee black", "entity": "Bob Builder",
                                          "provenance": "t"}, remote)
        assert not err, first
        # the same meaning through the other front end: its dedup sees the first one's vector
        again, err = call(b, "remember", {"fact": "Bob Builder takes his coffee black", "entity": "Bob Builder",
                                          "provenance": "t"}, remote)
        assert not err, again
        # (a new fact with nothing near it would be "inserted"; the embedded dedup says the same)
        assert again["status"] in ("duplicate", "superseded"), again
        assert first["status"] == "inserted"
    finally:
        for engine in engines:
            engine.close()
