"""Edge cases a real vault meets: folder moves, slug collisions, mass deletes,
edits during indexing, .brainignore edits, odd files, odd links, odd writes."""

import os
import shutil

import pytest

from indexer_fixtures import links_of, open_index, page, wait_for, write  # noqa: F401
from brain.indexer.vault.visibility import Viewer


def _count(db, sql, *a):
    return db.execute(sql, a).fetchone()[0]


def test_folder_move_keeps_ids_and_links(vault, open_index):
    for i in range(20):
        write(vault, f"people/p{i}.md",
              f"# Person {i}\n\nworks with [[p{(i+1)%20}]] and [[people/p{(i+2)%20}]]\n\n## More\ntext {i}")
    write(vault, "index.md", "[[people/p1]] [[p2]] [[People/P3|three]]")
    e = open_index(vault, watch=True)
    db = e.page_db
    ids = {r["slug"]: r["id"] for r in db.execute("SELECT slug, id FROM pages")}
    chunks = _count(db, "SELECT COUNT(*) FROM chunks")
    os.rename(vault / "people", vault / "persons")
    assert wait_for(lambda: page(db, "persons/p0") is not None and page(db, "people/p0") is None)
    assert e.index.sync.flush()
    for i in range(20):
        assert page(db, f"persons/p{i}")["id"] == ids[f"people/p{i}"]
    assert _count(db, "SELECT COUNT(*) FROM pages") == 21
    assert _count(db, "SELECT COUNT(*) FROM chunks") == chunks
    # bare names follow the move; a path that names the old folder is now stale text
    assert _count(db, "SELECT COUNT(*) FROM links WHERE to_id IS NULL AND target NOT LIKE '%/%'") == 0
    assert _count(db, "SELECT COUNT(*) FROM links WHERE to_id IS NULL") == 22
    assert links_of(db, "index")[1] == ("p2", "persons/p2", "mentions", "wikilink")
    results, _ = e.pages.search("text 7", 5, Viewer.owner())
    assert all(not r["slug"].startswith("people/") for r in results)
    # indexing never writes into the vault (its lock file lives in .brain/)
    stray = [p for p in vault.rglob("*") if p.is_file() and ".brain" not in p.parts and not p.name.endswith(".md")]
    assert stray == [] and {p.name for p in vault.iterdir()} == {"persons", "index.md", ".brain"}
    assert e.index.keyword.num_docs() == chunks


def test_rename_onto_a_colliding_slug(vault, open_index):
    write(vault, "notes/alpha.md", "alpha body")
    write(vault, "notes/Beta.md", "beta body uppercase")
    write(vault, "notes/other.md", "other body")
    e = open_index(vault, watch=True)
    db = e.page_db
    # "notes/beta.md" → same slug as notes/Beta.md
    os.rename(vault / "notes/alpha.md", vault / "notes/beta.md")
    assert wait_for(lambda: page(db, "notes/alpha") is None)
    assert e.index.sync.flush()
    assert page(db, "notes/beta")["path"] == "notes/Beta.md"
    kinds = {(p["path"], p["kind"]) for p in e.index.problems()}
    assert ("notes/beta.md", "slug_collision") in kinds
    # removing the winner lets the loser in
    os.unlink(vault / "notes/Beta.md")
    assert wait_for(lambda: (page(db, "notes/beta") or {"path": None})["path"] == "notes/beta.md")
    assert e.index.sync.flush()
    assert not [p for p in e.index.problems() if p["kind"] == "slug_collision"]


def test_deleting_a_500_page_folder_while_watching(vault, open_index):
    for i in range(500):
        write(vault, f"big/p{i:03}.md", f"# P{i}\n\nbody {i} [[p{(i+1)%500:03}]]")
    write(vault, "keep.md", "[[big/p001]] stays")
    e = open_index(vault, watch=True)
    db = e.page_db
    shutil.rmtree(vault / "big")
    assert wait_for(lambda: _count(db, "SELECT COUNT(*) FROM pages") == 1, timeout=30)
    assert e.index.sync.flush()
    assert _count(db, "SELECT COUNT(*) FROM chunks") == _count(
        db, "SELECT COUNT(*) FROM chunks c JOIN pages p ON p.id = c.page_id")
    assert _count(db, "SELECT COUNT(*) FROM links WHERE from_id NOT IN (SELECT id FROM pages)") == 0
    assert links_of(db, "keep") == [("big/p001", None, "mentions", "wikilink")]
    assert e.index.keyword.num_docs() == _count(db, "SELECT COUNT(*) FROM chunks")


def test_brainignore_edited_while_watching(vault, open_index):
    write(vault, "drafts/a.md", "draftword one")
    write(vault, "notes/b.md", "keepword two")
    e = open_index(vault, watch=True)
    db = e.page_db
    assert page(db, "drafts/a") is not None
    write(vault, ".brainignore", "drafts/\n")
    assert wait_for(lambda: page(db, "drafts/a") is None)
    results, _ = e.pages.search("draftword", 5, Viewer.owner())
    assert results == []
    write(vault, ".brainignore", "# nothing\n")
    assert wait_for(lambda: page(db, "drafts/a") is not None)
    # an editor's atomic save of the ignore file
    tmp = vault / ".brainignore.tmp"
    tmp.write_text("notes/\n")
    os.replace(tmp, vault / ".brainignore")
    assert wait_for(lambda: page(db, "notes/b") is None)
    os.unlink(vault / ".brainignore")
    assert wait_for(lambda: page(db, "notes/b") is not None)


def _vault_files(vault):
    return sorted(str(p.relative_to(vault)) for p in vault.rglob("*") if p.is_file() and ".brain" not in p.parts)


def test_put_page_onto_a_folder_is_refused_with_a_fix(vault, open_index):
    from brain.indexer.vault.vault_files import PageWriteError

    (vault / "notes.md").mkdir()        # a folder where the page file would go
    write(vault, "attachments", "not a folder")   # a file where a folder would go
    e = open_index(vault)
    for slug in ("notes", "attachments/x"):
        with pytest.raises(PageWriteError) as got:
            e.index.put_page(slug, "body", viewer=Viewer.owner())
        assert got.value.kind == "invalid_slug" and "rename" in got.value.fix.lower()
    assert _vault_files(vault) == ["attachments"]


def test_put_page_accepts_every_slug_the_index_gives_out(vault, open_index):
    """A page indexed as "notes/v1.2-plan" or "हिन्दी" can be written back under that slug."""
    write(vault, "notes/v1.2 plan.md", "plan")
    write(vault, "हिन्दी.md", "hindi")
    e = open_index(vault)
    slugs = [r["slug"] for r in e.pages.list_pages(None, 10, Viewer.owner())]
    assert sorted(slugs) == sorted(["notes/v1.2-plan", "हिन्दी"])
    for slug in slugs:
        got = e.pages.get_page(slug, Viewer.owner())
        body = e.index.put_page(slug, got["content"] + " edited", got["hash"], viewer=Viewer.owner())
        assert body["created"] is False and body["slug"] == slug
    assert _vault_files(vault) == sorted(["notes/v1.2 plan.md", "हिन्दी.md"])


def test_put_page_bad_slug_suggestion_is_itself_valid(vault, open_index):
    from brain.indexer.vault.vault_files import PageWriteError, check_slug

    for slug in ("x/.hidden", "a b", "Café/Ünï", "-lead"):
        with pytest.raises(PageWriteError) as got:
            check_slug(slug)
        suggested = got.value.fix.split('"')[1]
        assert check_slug(suggested) == suggested, (slug, got.value.fix)


def test_a_same_size_rewrite_with_a_preserved_mtime_is_reindexed(vault, open_index):
    """`cp -p`, a restore from backup, or a coarse-clock filesystem: the stat alone
    cannot tell the file changed, but a watcher event named it, so its bytes decide."""
    p = write(vault, "notes/n.md", "alpha words")
    e = open_index(vault)
    st = p.stat()
    p.write_text("gamma words")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    e.index.apply(["notes/n.md"])
    results, _ = e.pages.search("gamma", 5, Viewer.owner())
    assert [r["slug"] for r in results] == ["notes/n"]


def test_aliases_that_are_a_mapping_are_not_indexed_as_text(vault, open_index):
    write(vault, "a.md", "---\naliases: {x: y}\n---\nbody")
    e = open_index(vault)
    assert e.page_db.execute("SELECT COUNT(*) FROM aliases").fetchone()[0] == 0


def test_a_page_edited_while_it_is_indexed_ends_with_its_latest_text(vault, open_index):
    for i in range(300):
        write(vault, f"bulk/b{i:03}.md", f"# B{i}\n\nfiller {i}")
    e = open_index(vault, watch=True)
    db = e.page_db
    p = vault / "notes/live.md"
    p.parent.mkdir()
    # a burst of same-size saves while a 300-file batch is being indexed
    for i in range(300):
        write(vault, f"bulk/b{i:03}.md", f"# B{i}\n\nchanged {i}")
    for n in range(60):
        p.write_text(f"version v{n:03}")
    assert wait_for(lambda: page(db, "notes/live") is not None)
    assert e.index.sync.flush()
    chunk = db.execute("SELECT c.text FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.slug = ? AND c.ord >= 0",
                       ("notes/live",)).fetchone()[0]
    assert chunk == "version v059"
    results, _ = e.pages.search("v059", 5, Viewer.owner())
    assert [r["slug"] for r in results] == ["notes/live"] and results[0]["stale"] is False


def test_renaming_the_slug_owner_away_lets_the_colliding_file_in(vault, open_index):
    write(vault, "notes/Beta.md", "upper beta")
    e = open_index(vault, watch=True)
    db = e.page_db
    write(vault, "notes/beta.md", "lower beta")
    assert wait_for(lambda: any(p["kind"] == "slug_collision" for p in e.index.problems()))
    pid = page(db, "notes/beta")["id"]
    os.rename(vault / "notes/Beta.md", vault / "notes/gamma.md")
    assert wait_for(lambda: page(db, "notes/gamma") is not None)
    assert e.index.sync.flush()
    assert page(db, "notes/gamma")["id"] == pid
    assert wait_for(lambda: (page(db, "notes/beta") or {"path": None})["path"] == "notes/beta.md", timeout=3)
    assert not [p for p in e.index.problems() if p["kind"] == "slug_collision"]


def test_folder_move_carries_files_named_with_emoji(vault, open_index):
    """A folder move reports only the folder; every page under it must follow,
    whatever its name sorts as (an emoji is above U+FFFF)."""
    write(vault, "plans/🚀 launch.md", "rocket plan")
    write(vault, "plans/zz.md", "plain plan")
    e = open_index(vault, watch=True)
    db = e.page_db
    ids = {r["path"]: r["id"] for r in db.execute("SELECT path, id FROM pages")}
    os.rename(vault / "plans", vault / "ideas")
    assert wait_for(lambda: page(db, "ideas/zz") is not None)
    assert e.index.sync.flush()
    paths = {r["path"]: r["id"] for r in db.execute("SELECT path, id FROM pages")}
    assert paths == {"ideas/🚀 launch.md": ids["plans/🚀 launch.md"], "ideas/zz.md": ids["plans/zz.md"]}


def test_folder_moved_out_of_the_vault_takes_every_page_with_it(vault, open_index):
    write(vault, "plans/🚀 launch.md", "rocket plan")
    write(vault, "plans/zz.md", "plain plan")
    write(vault, "keep.md", "kept")
    e = open_index(vault, watch=True)
    db = e.page_db
    os.rename(vault / "plans", vault.parent / "plans-elsewhere")
    assert wait_for(lambda: page(db, "plans/zz") is None)
    assert e.index.sync.flush()
    assert [r[0] for r in db.execute("SELECT path FROM pages")] == ["keep.md"]


def test_list_pages_prefix_includes_slugs_with_astral_letters(vault, open_index):
    write(vault, "math/𝔸lgebra.md", "algebra")
    write(vault, "math/basics.md", "basics")
    e = open_index(vault)
    assert sorted(r["slug"] for r in e.pages.list_pages("math/", 50, Viewer.owner())) == ["math/basics", "math/𝔸lgebra"]


def test_odd_files_are_indexed_or_reported_with_the_right_fix(vault, open_index):
    write(vault, "latin1.md", "caf\xe9 r\xe9sum\xe9".encode("latin-1"))
    write(vault, "utf16.md", "\ufeffhello from notepad".encode("utf-16"))
    write(vault, "empty.md", "")
    write(vault, "fm-only.md", "---\ntitle: Only Frontmatter\naliases: null\n---\n")
    write(vault, "tabs.md", "---\ntitle:\tTabbed\n\tbad: x\n---\ntab body")
    write(vault, "dup.md", "---\ntitle: First\ntitle: Second\n---\ndup body")
    write(vault, "dated.md", "---\ntitle: 2024-01-02\ndate: 2024-01-02\n---\ndated body")
    write(vault, "list-title.md", "---\ntitle: [a, b]\naliases: [x, {k: v}, [y]]\n---\nlist body")
    e = open_index(vault)
    titles = {r["slug"]: r["title"] for r in e.page_db.execute("SELECT slug, title FROM pages")}
    # no usable title or H1: the file name as written
    assert titles == {"latin1": "latin1", "empty": "empty", "fm-only": "Only Frontmatter", "tabs": "tabs",
                      "dup": "Second", "dated": "2024-01-02", "list-title": "list-title"}
    problems = {p["path"]: (p["kind"], p["detail"]) for p in e.index.problems()}
    assert problems["utf16.md"][0] == "binary" and "UTF-8" in problems["utf16.md"][1]
    assert problems["latin1.md"][0] == "invalid_utf8" and problems["tabs.md"][0] == "bad_frontmatter"
    assert [r[0] for r in e.page_db.execute(
        "SELECT alias FROM aliases a JOIN pages p ON p.id = a.page_id WHERE p.slug = 'list-title'")] == ["x"]


def test_slug_collision_problems_do_not_pile_up_or_outlive_the_collision(vault, open_index):
    write(vault, "notes/Beta.md", "upper beta")
    e = open_index(vault, watch=True)
    loser = vault / "notes/beta.md"
    for n in range(3):
        loser.write_text(f"lower beta {n}")
        assert wait_for(lambda: any(p["path"] == "notes/beta.md" for p in e.index.problems()))
        assert e.index.sync.flush()
    owner_rows = [p for p in e.index.problems() if p["path"] == "notes/Beta.md"]
    assert len(owner_rows) == 1, owner_rows
    loser.unlink()
    assert wait_for(lambda: not e.index.problems(), timeout=3), e.index.problems()


@pytest.mark.parametrize("content, words", [("a\x00b", "NUL"), ("bad \ud800 text", "surrogate")])
def test_put_page_refuses_content_it_could_not_index_before_writing(vault, open_index, content, words):
    from brain.indexer.vault.vault_files import PageWriteError

    e = open_index(vault)
    with pytest.raises(PageWriteError) as got:
        e.index.put_page("notes/odd", content, viewer=Viewer.owner())
    assert got.value.kind == "invalid_content" and words in got.value.message and got.value.fix
    assert _vault_files(vault) == []


def test_put_page_refuses_a_sync_conflict_name_saying_why(vault, open_index):
    from brain.indexer.vault.vault_files import PageWriteError

    e = open_index(vault)
    with pytest.raises(PageWriteError) as got:
        e.index.put_page("notes/x.sync-conflict-20260102-101010-abc", "x", viewer=Viewer.owner())
    assert "sync-conflict" in got.value.message and ".brainignore" not in got.value.message
    assert _vault_files(vault) == []


def test_brainignore_saved_with_a_byte_order_mark_still_ignores_its_first_line(vault, open_index):
    write(vault, ".brainignore", "\ufeffdrafts/\r\nscratch.md\r\n".encode("utf-8"))
    write(vault, "drafts/a.md", "draft")
    write(vault, "scratch.md", "scratch")
    write(vault, "kept.md", "kept")
    e = open_index(vault)
    assert [r[0] for r in e.page_db.execute("SELECT slug FROM pages")] == ["kept"]


def test_a_batch_that_fails_is_retried_not_dropped(vault, open_index):
    """A transient failure (here: the database busy past its timeout, as a full disk
    would be) must not lose the saves of that batch until the next restart."""
    import sqlite3

    write(vault, "notes/a.md", "first words")
    e = open_index(vault, watch=True)
    e.index.wdb.execute("PRAGMA busy_timeout = 50")
    path = e.page_db.execute("PRAGMA database_list").fetchone()[2]
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        write(vault, "notes/a.md", "second words, longer")
        assert wait_for(lambda: e.index.sync.failures > 0)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert wait_for(lambda: e.pages.search("second", 5, Viewer.owner())[0], timeout=5)


def test_ignore_globs_do_not_reach_across_folders():
    """gitignore semantics: `*` stays inside one folder, `**` spans any number of them;
    `journal/*.md` must not silently drop the notes of journal/2024/."""
    from brain.indexer.vault.scan import IgnoreRules

    rules = IgnoreRules(["journal/*.md", "a/**/b.md", "x?/y.md", "logs/[0-9]*.md"])
    assert rules.ignored("journal/today.md", False) and not rules.ignored("journal/2024/today.md", False)
    assert rules.ignored("a/b.md", False) and rules.ignored("a/p/q/b.md", False) and not rules.ignored("a/b2.md", False)
    assert rules.ignored("x1/y.md", False) and not rules.ignored("x/1/y.md", False)
    assert rules.ignored("logs/2024.md", False) and not rules.ignored("logs/notes.md", False)
