"""Keyword search: hostile query strings, ranking, privacy, dedup, evidence, freshness."""

import pytest
from conftest import call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from indexer_fixtures import bump_mtime, open_index, write  # noqa: F401
from brain.indexer.vault.visibility import Viewer

HOSTILE = ["ADR-016", "src/main.py", "C++ (x", "foo:bar", '"unbalanced', "", "   ", "AND OR NOT", "title:alice",
           "*", "?", "[[Alice]]", "a" * 5000, "\x00", "😀 émoji", "-", "+alice -bob", "(((", "\\", "'"]


@pytest.fixture
def searchable(vault, open_index):
    write(vault, "people/alice-example.md",
          "---\ntitle: Alice Example\naliases: [AE]\n---\nAlice likes sailing and ADR-016.\n\n"
          "## Work\nShe maintains src/main.py at Acme.\n")
    write(vault, "notes/sailing-log.md", "# Sailing log\n" + "Sailing with Alice again. " * 3)
    write(vault, "notes/mentions.md", "Alice Example was mentioned in passing.\n# Other\nalice again\n# Third\nalice")
    write(vault, "private/diary.md", "---\nvisibility: private\n---\nAlice and the secret sailing plan.\n")
    return open_index(vault)


def test_hostile_query_strings_never_raise(searchable, remote):
    for q in HOSTILE:
        body, err = call(searchable, "recall", {"query": q}, remote)
        assert not err, (q, body)
        assert isinstance(body.get("results", []), list)
    body, _ = call(searchable, "recall", {"query": "ADR-016"}, remote)
    assert body["results"][0]["slug"] == "people/alice-example"
    body, _ = call(searchable, "recall", {"query": "src/main.py"}, remote)
    assert body["results"][0]["slug"] == "people/alice-example"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_no_query_string_raises(searchable, q):
    results, degraded = searchable.pages.search(q, 10, Viewer.world())
    assert isinstance(results, list) and degraded == "keyword_only_no_embedding_provider"


def test_title_and_alias_matches_rank_above_body_matches(searchable, local):
    results, _ = searchable.pages.search("sailing", 10, Viewer.owner())
    assert results[0]["slug"] == "notes/sailing-log"  # the title says it; others only mention it
    results, _ = searchable.pages.search("alice example", 10, Viewer.owner())
    assert results[0]["slug"] == "people/alice-example"
    assert results[0]["evidence"] == "exact_title_match" and results[0]["create_safety"] == "exists"
    results, _ = searchable.pages.search("AE", 10, Viewer.owner())
    assert results[0]["slug"] == "people/alice-example" and results[0]["evidence"] == "alias_hit"


def test_results_are_page_deduplicated_with_the_best_chunk(searchable):
    results, _ = searchable.pages.search("alice", 10, Viewer.owner())
    slugs = [r["slug"] for r in results]
    assert len(slugs) == len(set(slugs))
    hit = next(r for r in results if r["slug"] == "people/alice-example")
    assert hit["chunk"] == "Alice likes sailing and ADR-016."  # the chunk that says "alice", not "## Work"
    results, _ = searchable.pages.search("maintains", 10, Viewer.owner())
    assert results[0]["chunk"] == "She maintains src/main.py at Acme."


def test_private_pages_hidden_from_remote_only(searchable, local, remote):
    body, _ = call(searchable, "recall", {"query": "secret plan"}, remote)
    assert body["results"] == []
    body, _ = call(searchable, "recall", {"query": "secret plan"}, local)
    assert [r["slug"] for r in body["results"]] == ["private/diary"]


def test_result_shape_evidence_and_degraded_flag(searchable, remote):
    body, err = call(searchable, "recall", {"query": "sailing plan", "limit": 2}, remote)
    assert not err and body["search_degraded"] == "keyword_only_no_embedding_provider"
    assert len(body["results"]) <= 2
    for r in body["results"]:
        assert set(r) == {"slug", "title", "chunk", "evidence", "create_safety", "provenance", "indexed_at", "stale",
                          "score"}
        assert 0.0 <= r["score"] <= 1.0
        assert r["provenance"] == r["slug"] and r["stale"] is False
        assert r["evidence"] in {"alias_hit", "exact_title_match", "keyword_exact", "weak_semantic"}
    weak, _ = searchable.pages.search("alice zebra quokka narwhal", 10, Viewer.world())
    assert weak and all(r["evidence"] == "weak_semantic" and r["create_safety"] == "unknown" for r in weak
                        if r["slug"] != "people/alice-example")
    exact, _ = searchable.pages.search("sailing alice", 10, Viewer.world())
    assert any(r["evidence"] == "keyword_exact" and r["create_safety"] == "probable" for r in exact)


def test_freshness_flag_turns_on_when_the_file_changes_unindexed(searchable, vault, remote):
    results, _ = searchable.pages.search("maintains", 5, Viewer.world())
    assert results[0]["stale"] is False and results[0]["indexed_at"].endswith("Z")
    bump_mtime(vault / "people/alice-example.md")
    results, _ = searchable.pages.search("maintains", 5, Viewer.world())
    assert results[0]["stale"] is True
    searchable.index.apply(["people/alice-example.md"])
    results, _ = searchable.pages.search("maintains", 5, Viewer.world())
    assert results[0]["stale"] is False


def test_search_tool_and_budget_packing(searchable, local):
    body, err = call(searchable, "search", {"query": "alice", "limit": 2}, local)
    assert not err and len(body["results"]) == 2 and body["search_degraded"]
    body, _ = call(searchable, "recall", {"query": "alice", "budget_tokens": 1}, local)
    assert body["results"] == [] and body["dropped_count"] >= 1
