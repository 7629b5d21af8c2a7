"""Hybrid search with the real MiniLM model and hnsw vectors (loads the model once)."""

import pytest
from conftest import call
from indexer_fixtures import open_index, wait_for, write  # noqa: F401
from vectors_fixtures import minilm  # noqa: F401
from brain.indexer.vault.visibility import Viewer

pytestmark = pytest.mark.model


def test_vectors_fuse_with_keywords_and_follow_edits(vault, open_index, minilm, remote):  # noqa: F811
    write(vault, "companies/acme.md", "---\ntitle: Acme\n---\nAcme builds reusable rockets and launch vehicles.\n")
    write(vault, "people/ann.md", "# Ann\nAnn sails small boats on the lake every weekend.\n")
    write(vault, "private/p.md", "---\nvisibility: private\n---\nSecret notes about rockets and spacecraft.\n")
    e = open_index(vault, watch=True)
    e.load_models(background=False, embedder=minilm)
    assert e.vectors.ready
    body, err = call(e, "recall", {"query": "spacecraft manufacturer", "limit": 3}, remote)
    assert not err and "search_degraded" not in body
    slugs = [r["slug"] for r in body["results"]]
    assert slugs[0] == "companies/acme" and "private/p" not in slugs  # no shared word: vectors found it
    body, _ = call(e, "recall", {"query": "Acme builds reusable rockets and launch vehicles."}, remote)
    assert body["results"][0]["evidence"] in ("exact_title_match", "high_vector_match")
    write(vault, "people/ann.md", "# Ann\nAnn now studies medieval poetry and old manuscripts.\n")

    def found_by_meaning():
        results, degraded = e.pages.search("literature scholar", 3, Viewer.world(), embedder=e.embedder, vectors=e.vectors)
        return degraded is None and results and results[0]["slug"] == "people/ann"

    assert wait_for(found_by_meaning, timeout=20)
