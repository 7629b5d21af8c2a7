"""Page search in PostgreSQL (daemon/postgres/page_load.py, page_search.py) on a real
server with pgvector: the tantivy arm's fields and weights, English stemming, the vector arm,
and visibility applied inside every arm."""

from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg")

DIM = 384


def axis(i: int, lean: int | None = None) -> list[float]:
    """A unit vector along axis i (leaning towards axis `lean`): the vector arm's data, no model needed."""
    v = [0.0] * DIM
    v[i] = 1.0
    if lean is not None:
        v[i], v[lean] = 0.8, 0.6
    return v


def page(slug, title, chunks, *, visibility="world", aliases=(), tags=(), vectors=None):
    return {"slug": slug, "path": f"{slug}.md", "title": title, "visibility": visibility,
            "aliases": list(aliases), "tags": list(tags),
            "updated_at": "2026-01-01T00:00:00.000Z", "indexed_at": "2026-01-01T00:00:00.000Z",
            "chunks": [{"ord": i, "heading": h, "heading_path": h or "", "text": t, "hash": f"{slug}#{i}",
                        "vector": (vectors or {}).get(i)} for i, (h, t) in enumerate(chunks)]}


PAGES = [
    page("projects/billing-migration", "Billing Migration", [(None, "We move invoices to the new ledger."),
                                                             ("Risks", "Downtime during the cutover.")],
         aliases=["ledger move"], vectors={0: axis(0), 1: axis(1)}),
    page("notes/weekly", "Weekly notes", [(None, "Talked about billing, then lunch. Migrations were mentioned."),
                                          ("Lunch", "Pizza again.")], vectors={0: axis(2), 1: axis(3)}),
    page("people/alice-example", "Alice", [(None, "Works on the payments team.")], tags=["engineering"],
         vectors={0: axis(4)}),
    page("private/salary", "Salary review", [(None, "Billing migration bonus for the whole team.")],
         visibility="private", vectors={0: axis(0, lean=5)}),
]


@pytest.fixture
def db(pg_dsn):
    from brain.daemon.postgres import schema
    from brain.daemon.postgres.page_load import load_pages

    with psycopg.connect(pg_dsn) as conn:
        schema.migrate(conn)
        assert load_pages(conn, PAGES) == {"pages": 4, "chunks": 6}
        yield conn


def slugs(conn, query, viewer=None, vector=None, mode="keyword", limit=10):
    from brain.daemon.postgres.page_search import search
    from brain.indexer.vault.visibility import Viewer

    return [h["slug"] for h in search(conn, query, vector, viewer or Viewer.world(), limit, mode=mode)]


def test_a_page_named_for_the_query_ranks_above_a_page_that_mentions_it(db):
    # both pages hold "billing" and a form of "migration"; only one is titled so (title weight A vs body D)
    assert slugs(db, "billing migrations")[:2] == ["projects/billing-migration", "notes/weekly"]


def test_words_are_stemmed_the_english_way(db):
    assert slugs(db, "migrating")[0] in ("projects/billing-migration", "notes/weekly")
    assert "projects/billing-migration" in slugs(db, "invoice")


def test_path_and_tags_are_searched_word_by_word(db):
    assert slugs(db, "example") == ["people/alice-example"]       # a path segment, cut at its hyphen
    assert slugs(db, "engineering") == ["people/alice-example"]   # a tag


def test_an_alias_or_a_heading_equal_to_the_query_leads(db):
    from brain.daemon.postgres.page_search import search
    from brain.indexer.vault.visibility import Viewer

    hits = search(db, "ledger move", None, Viewer.world(), 5, mode="keyword")
    assert hits[0]["slug"] == "projects/billing-migration" and hits[0]["evidence"] == "alias_hit"
    assert slugs(db, "lunch")[0] == "notes/weekly"


def test_the_nearest_chunk_wins_the_vector_arm(db):
    assert slugs(db, "anything", vector=axis(4), mode="vector")[0] == "people/alice-example"
    assert slugs(db, "anything", vector=axis(3), mode="vector")[0] == "notes/weekly"


def test_a_private_page_is_never_returned_to_the_world_in_any_arm(db):
    from brain.indexer.vault.visibility import Viewer

    # the private page is the best keyword match for "bonus" and the nearest chunk to axis 5
    for mode in ("keyword", "vector", "hybrid"):
        assert "private/salary" not in slugs(db, "bonus billing migration", vector=axis(5), mode=mode)
        assert "private/salary" in slugs(db, "bonus billing migration", Viewer.owner(), vector=axis(5), mode=mode)
    assert slugs(db, "salary review") == []           # its exact title, too
    assert slugs(db, "salary review", Viewer.owner())[0] == "private/salary"


def test_a_hit_has_the_embedded_search_shape(db):
    from brain.daemon.postgres.page_search import search
    from brain.indexer.vault.visibility import Viewer

    hit = search(db, "cutover downtime", axis(1), Viewer.world(), 3, mode="hybrid")[0]
    assert hit["slug"] == "projects/billing-migration"
    assert {"slug", "title", "chunk", "evidence", "create_safety", "score", "provenance", "indexed_at"} <= set(hit)
    assert "cutover" in hit["chunk"] and hit["score"] == 1.0


def test_loading_a_page_again_replaces_it(db):
    from brain.daemon.postgres.page_load import load_pages

    load_pages(db, [page("notes/weekly", "Weekly notes", [(None, "Only tea this week.")])])
    assert db.execute("SELECT count(*) FROM pages WHERE slug = 'notes/weekly'").fetchone()[0] == 1
    assert slugs(db, "pizza") == [] and slugs(db, "tea") == ["notes/weekly"]


def test_a_page_without_a_visibility_is_private(db):
    from brain.daemon.postgres.page_load import load_pages

    unsure = page("notes/unsure", "Unsure", [(None, "Quokka sightings.")])
    del unsure["visibility"]
    load_pages(db, [unsure])
    assert slugs(db, "quokka") == []
