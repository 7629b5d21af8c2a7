"""What is a page: ignore rules, conflict copies, slug collisions, and bad files."""

import os

from indexer_fixtures import open_index, page, write  # noqa: F401

from brain.indexer.vault.scan import MAX_PAGE_BYTES, IgnoreRules, is_conflict_copy
from brain.indexer.vault.visibility import Viewer


def _slugs(e):
    return sorted(r[0] for r in e.page_db.execute("SELECT slug FROM pages"))


def _problems(e):
    return {(r["path"], r["kind"]) for r in e.index.problems()}


def test_dot_folders_brainignore_and_non_markdown_are_not_pages(vault, open_index):
    for rel in ("keep.md", ".obsidian/x.md", ".trash/old.md", ".git/y.md", "notes/.hidden.md", "templates/t.md",
                "drafts/a/b.md", "scratch.tmp.md", "docs/readme.txt", "archive/2020/x.md", "archive/keep.md"):
        write(vault, rel, "text")
    write(vault, ".brainignore", "# comment\ntemplates/\ndrafts\n*.tmp.md\n/archive/2020\n")
    e = open_index(vault)
    assert _slugs(e) == ["archive/keep", "keep"]


def test_ignore_rules_negation_anchoring_and_globstar():
    rules = IgnoreRules(["*.log.md", "!important.log.md", "/top.md", "**/cache/", "a/*/c.md"])
    assert rules.ignored("x/y.log.md", False) and not rules.ignored("x/important.log.md", False)
    assert rules.ignored("top.md", False) and not rules.ignored("sub/top.md", False)
    assert rules.ignored("p/q/cache/z.md", False) and not rules.ignored("p/cache.md", False)
    assert rules.ignored("a/b/c.md", False) and not rules.ignored("a/c.md", False)


def test_editing_brainignore_re_scans(vault, open_index):
    write(vault, "tmp/x.md", "x")
    e = open_index(vault)
    assert _slugs(e) == ["tmp/x"]
    write(vault, ".brainignore", "tmp/\n")
    e.index.apply([".brainignore"])
    assert _slugs(e) == []


def test_conflict_copies_are_reported_never_indexed(vault, open_index):
    names = ["note (conflicted copy 2026-01-02).md", "note (Alice's conflicted copy 2026-01-02).md",
             "note.sync-conflict-20260102-101010-ABCDEFG.md"]
    assert all(is_conflict_copy(n) for n in names) and not is_conflict_copy("conflict resolution.md")
    write(vault, "note.md", "original")
    for n in names:
        write(vault, n, "copy")
    e = open_index(vault)
    assert _slugs(e) == ["note"]
    assert {p for p, k in _problems(e) if k == "conflict_copy"} == set(names)
    os.unlink(vault / names[0])
    e.index.reconcile()
    assert {p for p, k in _problems(e) if k == "conflict_copy"} == set(names[1:])


def test_slug_collision_reports_both_and_indexes_the_other_when_one_goes(vault, open_index):
    write(vault, "People/Alice Smith.md", "first")
    write(vault, "people/alice-smith.md", "second")
    e = open_index(vault)
    assert _slugs(e) == ["people/alice-smith"]
    owner = page(e.page_db, "people/alice-smith")["path"]
    other = ({"People/Alice Smith.md", "people/alice-smith.md"} - {owner}).pop()
    assert {(owner, "slug_collision"), (other, "slug_collision")} <= _problems(e)
    os.unlink(vault / owner)
    e.index.apply([owner])
    assert page(e.page_db, "people/alice-smith")["path"] == other


def test_bad_files_are_indexed_or_skipped_with_a_reason(vault, open_index):
    write(vault, "binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00 data")
    write(vault, "latin1.md", "caf\xe9 au lait".encode("latin-1"))
    write(vault, "huge.md", b"x" * (MAX_PAGE_BYTES + 10))
    write(vault, "many-links.md", " ".join(f"[[target {i}]]" for i in range(5000)))
    write(vault, "bad-yaml.md", "---\nkey: [unclosed\n---\nThe body survives.\n")
    os.makedirs(vault / "loop")
    os.symlink(vault / "loop", vault / "loop" / "again")
    os.symlink(vault / "self.md", vault / "self.md")  # a link to itself
    write(vault, "fine.md", "fine")
    e = open_index(vault)
    # an oversized page is a stub: its name, no text (docs/architecture.md "Hostile content")
    assert _slugs(e) == ["bad-yaml", "fine", "huge", "latin1", "many-links"]
    assert e.page_db.execute("SELECT COUNT(*) FROM chunks WHERE page_id = ?",
                             (page(e.page_db, "huge")["id"],)).fetchone()[0] == 0
    kinds = {k for _, k in _problems(e)}
    assert {"binary", "invalid_utf8", "too_large", "bad_frontmatter", "symlink_loop"} <= kinds
    assert ("loop/again", "symlink_loop") in _problems(e)
    assert e.page_db.execute("SELECT COUNT(*) FROM links").fetchone()[0] == 5000
    assert page(e.page_db, "latin1")["title"] == "latin1"   # the file name as written
    results, _ = e.pages.search("survives", 5, Viewer.owner())
    assert [r["slug"] for r in results] == ["bad-yaml"]


def test_a_file_deleted_between_event_and_read_is_just_gone(vault, open_index):
    write(vault, "a.md", "a")
    e = open_index(vault)
    os.unlink(vault / "a.md")
    report = e.index.apply(["a.md", "never-existed.md"])
    assert _slugs(e) == [] and report["deleted"] == 1
