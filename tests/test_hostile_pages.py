"""Hostile page content is bounded (docs/architecture.md "Hostile content").

An alias bomb, a self-referencing alias or an oversized frontmatter block is
refused before anything is built from it; the page stays indexed without its
frontmatter and is private until fixed.
"""

from __future__ import annotations

import json
import time

from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401

from brain.indexer.vault import frontmatter
from brain.indexer.vault.frontmatter import split_frontmatter
from brain.indexer.vault.parse import parse_page


def bomb(levels: int) -> str:
    """`levels` lists of nine aliases to the list before: 9**levels values once expanded, in a few hundred bytes."""
    names = [chr(97 + i) for i in range(levels)]
    out = f"{names[0]}: &{names[0]} [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for prev, name in zip(names, names[1:]):
        out += f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    return out


def test_an_alias_bomb_is_refused_fast_and_leaves_the_page_private():
    text = "---\ntitle: Bomb\n" + bomb(6) + "---\n# Bomb\n\nA page of a few hundred bytes.\n"
    assert len(text) < 400
    t0 = time.monotonic()
    page = parse_page("notes/bomb.md", text)
    assert time.monotonic() - t0 < 0.5
    assert page.visibility == "private" and page.frontmatter == {}
    assert "aliases" in (page.frontmatter_error or "")
    assert f"{frontmatter.MAX_FRONTMATTER_NODES:,}" in page.frontmatter_error
    assert page.title == "Bomb" and page.chunks   # the body is still indexed


def test_a_self_referencing_alias_is_refused():
    fm = split_frontmatter("---\na: &a [1, *a]\n---\nbody\n")
    assert fm.data == {} and "contains it" in (fm.error or "")


def test_aliases_within_the_limit_still_expand():
    fm = split_frontmatter("---\nbase: &b {owner: Alice}\nthis: *b\nthat: *b\n---\nbody\n")
    assert fm.error is None and fm.data["that"] == {"owner": "Alice"}


def test_an_oversized_frontmatter_block_is_refused_unread():
    limit = getattr(frontmatter, "MAX_FRONTMATTER_BYTES", 64 * 1024)
    text = "---\n" + "".join(f"k{i}: v\n" for i in range(limit // 7 + 10)) + "---\nbody\n"
    page = parse_page("notes/wide.md", text)
    assert page.frontmatter == {} and page.visibility == "private"
    assert f"{limit // 1024} KB limit" in page.frontmatter_error


def test_a_planted_alias_bomb_keeps_answers_small_and_recall_fast(vault, open_index, remote, local):
    write(vault, "people/alice.md", "# Alice\n\nAlice keeps the ledger.\n")
    e = open_index(vault)
    content = "---\ntitle: Ledger Bomb\n" + bomb(6) + "---\n# Ledger Bomb\n\nThe ledger, again.\n"
    t0 = time.monotonic()
    body, err = call(e, "put_page", {"slug": "notes/ledger-bomb", "content": content}, remote)
    assert not err and time.monotonic() - t0 < 2.0, body
    for caller in (remote, local):
        t0 = time.monotonic()
        hits, err = call(e, "recall", {"query": "ledger"}, caller)
        assert not err and time.monotonic() - t0 < 1.0
    page, err = call(e, "get_page", {"slug": "notes/ledger-bomb"}, local)
    assert not err and len(json.dumps(page)) < 4 * len(content) and page["frontmatter"] == {}
    gone, err = call(e, "get_page", {"slug": "notes/ledger-bomb"}, remote)
    assert err and gone["error"] == "not_found"   # refused frontmatter: private until fixed


def test_a_page_over_the_size_limit_is_indexed_as_a_stub(vault, open_index, remote, local):
    from brain.indexer.vault.scan import MAX_PAGE_BYTES

    filler = "export line with zebrafish words\n" * (MAX_PAGE_BYTES // 33 + 100)
    write(vault, "dumps/export.md", "---\ntitle: Big Export\naliases: [the dump]\n---\n# Big Export\n\n" + filler)
    write(vault, "dumps/secret.md", "---\ntitle: Secret Dump\nvisibility: private\n---\n" + filler)
    write(vault, "dumps/open-ended.md", "---\ntitle: Open Ended\n" + "k: v\n" * (MAX_PAGE_BYTES // 4 + 100))
    t0 = time.monotonic()
    e = open_index(vault)
    assert time.monotonic() - t0 < 10
    rows = {r["slug"]: r for r in e.page_db.execute("SELECT slug, title, visibility FROM pages")}
    assert rows["dumps/export"]["title"] == "Big Export" and rows["dumps/export"]["visibility"] == "world"
    assert rows["dumps/secret"]["visibility"] == rows["dumps/open-ended"]["visibility"] == "private"
    assert e.page_db.execute("SELECT COUNT(*) FROM chunks c JOIN pages p ON p.id = c.page_id "
                             "WHERE p.slug LIKE 'dumps/%'").fetchone()[0] == 0
    problems = {(r["path"], r["kind"]): r["detail"] for r in e.page_db.execute("SELECT * FROM problems")}
    assert "stub" in problems[("dumps/export.md", "too_large")]
    card, _ = call(e, "entity", {"name": "the dump"}, remote)
    assert card["found"] is True and card["card"]["entity"]["slug"] == "dumps/export"
    hits, _ = call(e, "recall", {"query": "zebrafish"}, remote)
    assert hits["results"] == []
    big, err = call(e, "get_page", {"slug": "dumps/export"}, local)
    assert err and big["error"] == "invalid_params" and "MB" in big["message"] and len(json.dumps(big)) < 1000
    listed, _ = call(e, "list_pages", {"prefix": "dumps/"}, remote)
    assert [p["slug"] for p in listed["pages"]] == ["dumps/export"]
