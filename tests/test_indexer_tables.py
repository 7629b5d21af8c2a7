"""The page tables after indexing a real vault: every column, link resolution, renames."""

import json

from indexer_fixtures import bump_mtime, links_of, open_index, page, write  # noqa: F401
from brain.indexer.vault.visibility import Viewer

ALICE = """---
title: Alice Example
aliases: [AE, "Alice E."]
works_at: "[[Acme Corp]]"
tags: [founder]
---
# Alice Example

Alice runs [[Acme Corp]]. She sails.

## Timeline
- **2024-03-01** | Crunchbase — Raised a seed round
"""


def test_every_column_is_populated(vault, open_index):
    write(vault, "people/alice-example.md", ALICE)
    write(vault, "companies/Acme Corp.md", "A rocket company.\n")
    e = open_index(vault)
    db = e.page_db
    a = page(db, "people/alice-example")
    assert (a["path"], a["title"], a["title_key"], a["tail"], a["type"], a["visibility"]) == (
        "people/alice-example.md", "Alice Example", "alice example", "alice-example", "person", "world")
    assert a["lead"] == "Alice runs Acme Corp." and json.loads(a["tags"]) == ["founder"]
    assert json.loads(a["frontmatter"])["aliases"] == ["AE", "Alice E."]
    assert a["updated_at"].endswith("Z") and a["indexed_at"].endswith("Z") and len(a["content_hash"]) == 64
    assert a["mtime_ns"] > 0 and a["size"] == len(ALICE.encode())
    acme = page(db, "companies/acme-corp")
    assert acme["path"] == "companies/Acme Corp.md" and acme["title"] == "Acme Corp" and acme["type"] == "company"
    assert sorted(r[0] for r in db.execute("SELECT alias FROM aliases WHERE page_id = ?", (a["id"],))) == ["ae", "alice e."]
    assert links_of(db, "people/alice-example") == [
        ("Acme Corp", "companies/acme-corp", "works_at", "frontmatter"),
        ("Acme Corp", "companies/acme-corp", "mentions", "wikilink")]
    tl = db.execute("SELECT date, source, summary FROM timeline WHERE page_id = ?", (a["id"],)).fetchall()
    assert [tuple(r) for r in tl] == [("2024-03-01", "Crunchbase", "Raised a seed round")]
    chunks = db.execute("SELECT heading, text, hash FROM chunks WHERE page_id = ? AND ord >= 0 ORDER BY ord",
                        (a["id"],)).fetchall()
    assert [c["heading"] for c in chunks] == ["Alice Example", "Timeline"]


def test_resolution_exact_path_then_unique_basename_then_shortest_path(vault, open_index):
    write(vault, "people/bob.md", "Bob")
    write(vault, "archive/people/bob.md", "Old Bob")
    write(vault, "deep/er/carol.md", "Carol")
    write(vault, "a/dave.md", "Dave 1")
    write(vault, "a/b/dave.md", "Dave 2")
    write(vault, "src.md", "[[archive/people/bob]] [[carol]] [[Dave]] [[people/bob]] [[er/carol]] [[nobody]] [[x/carol]]")
    e = open_index(vault)
    assert [t for _, t, _, _ in links_of(e.page_db, "src")] == [
        "archive/people/bob",  # exact path
        "deep/er/carol",       # unique basename
        "a/dave",              # shortest of two paths
        "people/bob",          # exact path beats the longer suffix match
        "deep/er/carol",       # a partial path matches as a suffix
        None,                  # unresolved, kept
        None,                  # wrong folder: no suffix match
    ]


def test_links_follow_pages_that_appear_move_and_vanish(vault, open_index):
    write(vault, "src.md", "[[Target]] and [[people/target]]")
    e = open_index(vault)
    db = e.page_db
    assert [t for _, t, _, _ in links_of(db, "src")] == [None, None]
    write(vault, "people/target.md", "here")
    e.index.apply(["people/target.md"])
    assert [t for _, t, _, _ in links_of(db, "src")] == ["people/target", "people/target"]
    pid = page(db, "people/target")["id"]
    (vault / "people/target.md").rename(vault / "people/target-renamed.md")
    e.index.apply(["people/target.md", "people/target-renamed.md"])
    moved = page(db, "people/target-renamed")
    assert moved["id"] == pid and page(db, "people/target") is None
    # the old names no longer point anywhere
    assert [t for _, t, _, _ in links_of(db, "src")] == [None, None]
    (vault / "people/target-renamed.md").rename(vault / "people/target.md")
    e.index.apply(["people/target.md", "people/target-renamed.md"])
    assert page(db, "people/target")["id"] == pid
    assert [t for _, t, _, _ in links_of(db, "src")] == ["people/target", "people/target"]
    (vault / "people/target.md").unlink()
    e.index.apply(["people/target.md"])
    assert [t for _, t, _, _ in links_of(db, "src")] == [None, None]


def test_unchanged_files_cost_no_parse_and_same_bytes_only_touch(vault, open_index):
    p = write(vault, "n.md", "same")
    e = open_index(vault)
    parsed = e.index.stats["parsed"]
    e.index.reconcile()
    assert e.index.stats["parsed"] == parsed
    bump_mtime(p)
    e.index.reconcile()
    assert e.index.stats["parsed"] == parsed and e.index.stats["touched"] == 1
    write(vault, "n.md", "different")
    e.index.reconcile()
    assert e.index.stats["parsed"] == parsed + 1


def test_edits_keep_ids_of_unchanged_chunks_and_report_the_diff(vault, open_index):
    write(vault, "n.md", "# One\nfirst\n# Two\nsecond\n")
    e = open_index(vault)
    seen = []
    e.index.on_chunks_changed.append(lambda added, removed: seen.append((added, removed)))
    db = e.page_db
    before = {r["heading"]: r["id"] for r in db.execute("SELECT id, heading FROM chunks")}
    write(vault, "n.md", "# One\nfirst\n# Two\nsecond, edited\n")
    e.index.apply(["n.md"])
    after = {r["heading"]: r["id"] for r in db.execute("SELECT id, heading FROM chunks")}
    assert after["One"] == before["One"] and after["Two"] != before["Two"]
    (added, removed), = seen
    assert [r["id"] for r in added] == [after["Two"]] and removed == [before["Two"]]
    assert added[0]["hash"] and added[0]["text"] == "second, edited"


def test_rename_while_closed_keeps_identity_by_content(vault, open_index, places):
    write(vault, "people/x.md", "content that moves")
    e = open_index(vault)
    pid = page(e.page_db, "people/x")["id"]
    e.close()
    (vault / "people/x.md").rename(vault / "people/y.md")
    e2 = open_index(vault)
    assert page(e2.page_db, "people/y")["id"] == pid and page(e2.page_db, "people/x") is None


def test_a_deleted_cache_is_rebuilt_with_the_same_answers(vault, open_index):
    write(vault, "people/alice-example.md", ALICE)
    e = open_index(vault)
    cache = e.cache_dir
    e.close()
    import shutil

    shutil.rmtree(cache / "keyword")
    e2 = open_index(vault)
    results, _ = e2.pages.search("sails", 5, Viewer.owner())
    assert [r["slug"] for r in results] == ["people/alice-example"]


def test_a_reported_move_keeps_identity_even_when_the_content_changed(vault, open_index):
    write(vault, "notes/draft.md", "first words")
    e = open_index(vault)
    pid = page(e.page_db, "notes/draft")["id"]
    (vault / "notes/draft.md").rename(vault / "notes/final.md")
    write(vault, "notes/final.md", "edited after the move")
    e.index.rename("notes/draft.md", "notes/final.md")
    assert page(e.page_db, "notes/final")["id"] == pid and page(e.page_db, "notes/draft") is None
    results, _ = e.pages.search("edited", 5, Viewer.owner())
    assert [r["slug"] for r in results] == ["notes/final"]
