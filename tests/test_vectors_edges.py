"""Vectors under whole-folder moves, mass deletes and hostile queries, with the live watcher."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import call
from indexer_fixtures import page, wait_for, write

from brain.daemon.server.vault_engine import VaultEngine
from vectors_fixtures import minilm  # noqa: F401  (fixture)
from brain.indexer.vault.visibility import Viewer

pytestmark = pytest.mark.model


@pytest.fixture
def live(vault, places, minilm):  # noqa: F811
    write(vault, "people/maria-lopez.md",
          "---\ntitle: Maria Lopez\naliases: [Dr. Lopez, the kids doctor]\n---\n"
          "Maria Lopez is a pediatrician at Riverside Clinic who cares for young children.\n")
    write(vault, "people/tom-ng.md", "# Tom Ng\nTom repairs sailing boats at the harbour. Knows [[maria-lopez]].\n")
    for i in range(30):
        write(vault, f"archive/old-{i:02}.md", f"# Old {i}\nLedger line {i} about quarterly invoices.\n")
    e = VaultEngine(vault, places, {}, writer="test")
    e.attach_index(watch=True)
    e.load_models(background=False, embedder=minilm)
    yield e
    e.close()


def _slugs(e, caller, query):
    body, err = call(e, "recall", {"query": query}, caller)
    assert not err, body
    return body["results"]


def _no_ghosts(e):
    db = e.page_db
    hashes = {r[0] for r in db.execute("SELECT DISTINCT hash FROM chunks")}
    assert len(e.vectors) == len(hashes)
    assert e.index.keyword.num_docs() == db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]


def test_folder_move_and_mass_delete_leave_no_ghost_vectors(live, vault, remote):
    e = live
    pid = page(e.page_db, "people/maria-lopez")["id"]
    embedded = e.vectors.embedded
    os.rename(vault / "people", vault / "persons")
    assert wait_for(lambda: page(e.page_db, "persons/maria-lopez") is not None)
    assert e.index.sync.flush() and e.vectors.wait_idle()
    assert page(e.page_db, "persons/maria-lopez")["id"] == pid and page(e.page_db, "people/maria-lopez") is None
    assert e.vectors.embedded == embedded   # moved text is not embedded again
    first = _slugs(e, remote, "physician treating kids")[0]
    assert first["slug"] == "persons/maria-lopez"
    back = e.pages.backlinks("persons/maria-lopez", Viewer.world())
    assert [b["slug"] for b in back] == ["persons/tom-ng"]
    shutil.rmtree(vault / "archive")
    assert wait_for(lambda: e.page_db.execute("SELECT COUNT(*) FROM pages").fetchone()[0] == 2)
    assert e.index.sync.flush() and e.vectors.wait_idle()
    _no_ghosts(e)
    assert all(not r["slug"].startswith("archive/") for r in _slugs(e, remote, "quarterly invoices ledger"))


def test_evidence_alias_title_paraphrase_and_hostile_queries(live, remote):
    e = live
    hit = _slugs(e, remote, "the kids doctor")[0]
    assert hit["slug"] == "people/maria-lopez" and hit["evidence"] == "alias_hit"
    hit = _slugs(e, remote, "tom ng")[0]
    assert hit["slug"] == "people/tom-ng" and hit["evidence"] == "exact_title_match"
    assert _slugs(e, remote, "someone who fixes yachts")[0]["slug"] == "people/tom-ng"
    for q in ['"', "C++ (x", "foo:bar AND", "*", "\\", "[[", "NOT", "a" * 5000, "\x00\x01", "🦀 ∑",
              "title:", "-", "'; DROP TABLE pages; --", " \t\n ", "(((", "~1^2"]:
        body, err = call(e, "recall", {"query": q}, remote)
        assert not err or body["error"] == "invalid_params", (q, body)
        body, err = call(e, "search", {"query": q}, remote)
        assert not err or body["error"] == "invalid_params", (q, body)
