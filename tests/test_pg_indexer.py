"""The PostgreSQL vault indexer (daemon/postgres/indexer.py) on a real server: a vault's
files become rows, and every change on disk (an edit, a delete, a rename, an editor's atomic
save, a frontmatter that stops parsing) changes the rows the same way the embedded index does;
the watcher follows saves by itself; put_page writes the file first and the row after."""

from __future__ import annotations

import os

import pytest

from indexer_fixtures import bump_mtime, wait_for, write

psycopg = pytest.importorskip("psycopg")

ALICE = """---
title: Alice Example
aliases: [Ally]
---
# Alice Example

Alice runs the boat club.

## Projects
Works on [[Acme Robotics]].

## Timeline
- **2026-10-01** | chat — Agreed to crew
"""
ACME = "# Acme Robotics\n\nAcme builds robots. [[Alice Example]] works here.\n"


@pytest.fixture
def indexed(vault, pg_dsn):
    """(vault, indexer after a first full pass, a reading connection, every chunk change heard)."""
    from brain.daemon.postgres.indexer import PgVaultIndexer

    write(vault, "people/alice-example.md", ALICE)
    write(vault, "companies/acme-robotics.md", ACME)
    indexer = PgVaultIndexer(vault, pg_dsn)
    heard: list[tuple[list, list]] = []
    indexer.on_chunks_changed.append(lambda added, removed: heard.append((added, removed)))
    assert indexer.reconcile()["parsed"] == 2
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        yield vault, indexer, conn, heard
    indexer.close()


def row(conn, slug):
    return conn.execute("SELECT id, title, visibility, path FROM pages WHERE slug = %s", (slug,)).fetchone()


def chunk_ids(conn, slug):
    return {r[1]: r[0] for r in conn.execute(
        "SELECT c.id, c.heading FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.slug = %s", (slug,))}


def target_of(conn, from_slug):
    return [r[0] for r in conn.execute("SELECT t.slug FROM links l JOIN pages f ON f.id = l.from_id "
                                       "LEFT JOIN pages t ON t.id = l.to_id WHERE f.slug = %s ORDER BY l.id",
                                       (from_slug,))]


def test_a_full_pass_writes_pages_chunks_links_aliases_and_timeline(indexed):
    _, _, conn, heard = indexed
    assert row(conn, "people/alice-example")[1:3] == ("Alice Example", "world")
    assert target_of(conn, "people/alice-example") == ["companies/acme-robotics"]
    assert target_of(conn, "companies/acme-robotics") == ["people/alice-example"]
    assert conn.execute("SELECT alias, display FROM aliases").fetchall() == [("ally", "Ally")]
    assert conn.execute("SELECT date, summary FROM timeline").fetchall()[0][0] == "2026-10-01"
    # the page card (ord -1) and the body's sections, each with its keyword document
    ords = [r[0] for r in conn.execute("SELECT ord FROM chunks c JOIN pages p ON p.id = c.page_id "
                                       "WHERE p.slug = 'people/alice-example' ORDER BY ord")]
    assert ords[0] == -1 and len(ords) >= 3
    assert conn.execute("SELECT count(*) FROM chunks WHERE document @@ to_tsquery('english', 'boat')").fetchone()[0]
    assert sum(len(a) for a, _ in heard) == conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


def test_an_edit_changes_the_row_and_keeps_unchanged_chunks(indexed):
    vault, indexer, conn, heard = indexed
    before = chunk_ids(conn, "people/alice-example")
    pid = row(conn, "people/alice-example")[0]
    write(vault, "people/alice-example.md", ALICE.replace("Alice Example\naliases", "Alice Sailor\naliases")
          .replace("runs the boat club", "captains the rowing team"))
    heard.clear()
    assert indexer.apply(["people/alice-example.md"])["parsed"] == 1
    assert row(conn, "people/alice-example")[:2] == (pid, "Alice Sailor")
    after = chunk_ids(conn, "people/alice-example")
    assert after["Projects"] == before["Projects"]          # same bytes: same chunk, its vector kept
    assert after["Alice Example"] != before["Alice Example"]  # the edited section is a new chunk
    assert conn.execute("SELECT count(*) FROM chunks WHERE document @@ to_tsquery('english', 'rowing')").fetchone()[0]
    assert not conn.execute("SELECT count(*) FROM chunks WHERE document @@ to_tsquery('english', 'boat')").fetchone()[0]
    # the kept chunk's keyword document follows the new title
    assert conn.execute("SELECT document @@ to_tsquery('english', 'sailor') FROM chunks WHERE id = %s",
                        (before["Projects"],)).fetchone()[0]
    added, removed = heard[-1]
    assert before["Alice Example"] in removed and after["Alice Example"] in {a["id"] for a in added}


def test_a_deleted_file_takes_its_rows_and_unresolves_links_into_it(indexed):
    vault, indexer, conn, heard = indexed
    gone = set(chunk_ids(conn, "companies/acme-robotics").values())
    os.remove(vault / "companies/acme-robotics.md")
    assert indexer.apply(["companies/acme-robotics.md"])["deleted"] == 1
    assert row(conn, "companies/acme-robotics") is None
    assert not conn.execute("SELECT count(*) FROM chunks WHERE id = ANY(%s)", (list(gone),)).fetchone()[0]
    assert target_of(conn, "people/alice-example") == [None]
    assert set(heard[-1][1]) == gone
    # it comes back: the link finds it again
    write(vault, "companies/acme-robotics.md", ACME)
    indexer.apply(["companies/acme-robotics.md"])
    assert target_of(conn, "people/alice-example") == ["companies/acme-robotics"]


def test_a_frontmatter_that_breaks_makes_the_page_private_until_fixed(indexed, pg_dsn):
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.visibility import Viewer

    vault, indexer, conn, _ = indexed
    path = write(vault, "people/alice-example.md", ALICE.replace("title: Alice Example", "title: [Alice Example"))
    indexer.apply(["people/alice-example.md"])
    assert row(conn, "people/alice-example")[2] == "private"
    assert conn.execute("SELECT kind FROM problems WHERE path = 'people/alice-example.md'").fetchone()[0] == \
        "bad_frontmatter"
    store = PgPagesStore(pg_dsn, vault)
    try:
        assert store.page("people/alice-example", Viewer.world()) is None
        assert store.backlink_count("companies/acme-robotics", Viewer.world()) == 0
        assert store.page("people/alice-example", Viewer.owner()) is not None
        path.write_text(ALICE, encoding="utf-8")
        bump_mtime(path)
        indexer.reconcile()
        assert store.page("people/alice-example", Viewer.world()) is not None
        assert conn.execute("SELECT count(*) FROM problems").fetchone()[0] == 0
    finally:
        store.close()


def test_a_file_replaced_by_rename_and_a_moved_file_are_picked_up(indexed):
    vault, indexer, conn, _ = indexed
    pid = row(conn, "companies/acme-robotics")[0]
    # an editor's atomic save: a temp file renamed over the page
    tmp = write(vault, "companies/.acme-robotics.md.tmp", ACME.replace("builds robots", "builds drones"))
    os.replace(tmp, vault / "companies/acme-robotics.md")
    indexer.apply(["companies/acme-robotics.md"])
    assert row(conn, "companies/acme-robotics")[0] == pid
    assert conn.execute("SELECT count(*) FROM chunks WHERE document @@ to_tsquery('english', 'drone')").fetchone()[0]
    # a move: same page id at the new path and slug; the link to the old name no longer resolves
    os.rename(vault / "companies/acme-robotics.md", vault / "companies/acme.md")
    report = indexer.apply(moves=[("companies/acme-robotics.md", "companies/acme.md")])
    assert report["renamed"] == 1
    assert row(conn, "companies/acme") == (pid, "Acme Robotics", "world", "companies/acme.md")
    assert row(conn, "companies/acme-robotics") is None
    assert target_of(conn, "people/alice-example") == [None]


def test_the_watcher_follows_saves_into_the_tables(indexed):
    vault, indexer, conn, _ = indexed
    indexer.start_watching(debounce_s=0.05, max_delay_s=0.2)
    write(vault, "notes/new-idea.md", "# New idea\n\nSolar kites.\n")
    assert wait_for(lambda: row(conn, "notes/new-idea"), timeout=15)
    os.remove(vault / "notes/new-idea.md")
    assert wait_for(lambda: row(conn, "notes/new-idea") is None, timeout=15)


def test_put_page_writes_the_file_then_the_row_and_never_over_a_private_page(indexed, pg_dsn):
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.vault_files import PageWriteError, content_hash
    from brain.indexer.vault.visibility import Viewer

    vault, _, conn, _ = indexed
    store = PgPagesStore(pg_dsn, vault)
    try:
        text = "# Kites\n\nThey fly.\n"
        out = store.put_page("notes/kites", text, None, Viewer.world())
        assert out == {"slug": "notes/kites", "path": "notes/kites.md", "hash": content_hash(text.encode()),
                       "created": True}
        assert (vault / "notes/kites.md").read_text() == text and row(conn, "notes/kites")[1] == "Kites"
        with pytest.raises(PageWriteError, match="expected_hash"):
            store.put_page("notes/kites", "# Kites\n\nstale\n", "0" * 64, Viewer.world())
        got = store.get_page("notes/kites", Viewer.world())
        assert got is not None and got["hash"] == out["hash"]
        secret = "---\nvisibility: private\n---\n# Diary\n\nsecret words\n"
        store.put_page("notes/diary", secret, None, Viewer.owner())
        answer = store.put_page("notes/diary", "# Diary\n\noverwritten\n", None, Viewer.world())
        assert answer["created"] is True                     # as if absent
        assert (vault / "notes/diary.md").read_text() == secret
        assert list((vault / ".brain" / "held").iterdir())   # what it sent is kept aside
        assert store.get_page("notes/diary", Viewer.world()) is None
    finally:
        store.close()


def test_the_indexer_process_loads_the_vault_follows_saves_and_stops_on_sigterm(vault, pg_dsn):
    """`python -m …indexer_run VAULT URL --watch`: what `brain index --watch --store URL` will run."""
    import json
    import signal
    import subprocess
    import sys

    write(vault, "people/alice-example.md", ALICE)
    proc = subprocess.Popen([sys.executable, "-m", "brain.daemon.postgres.indexer_run", str(vault), pg_dsn,
                             "--watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(proc.stdout.readline())   # the first pass's report, once it is committed
        assert first["parsed"] == 1
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            assert row(conn, "people/alice-example")[1] == "Alice Example"
            write(vault, "companies/acme-robotics.md", ACME)
            assert wait_for(lambda: row(conn, "companies/acme-robotics"), timeout=20)
            assert wait_for(lambda: target_of(conn, "people/alice-example") == ["companies/acme-robotics"], 20)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_connection_the_server_drops_is_replaced(indexed, pg_dsn):
    """A database restart or failover drops every connection: the store retries a read once on a new
    one; the indexer fails that batch (the watcher retries it) and the next one goes through."""
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.visibility import Viewer

    vault, indexer, conn, _ = indexed
    store = PgPagesStore(pg_dsn, vault)
    try:
        assert store.page("people/alice-example", Viewer.world()) is not None
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        assert store.page("people/alice-example", Viewer.world()) is not None
        write(vault, "notes/after.md", "# After\n\nWritten while the connection was gone.\n")
        with pytest.raises(psycopg.OperationalError):
            indexer.apply(["notes/after.md"])
        assert indexer.apply(["notes/after.md"])["parsed"] == 1
        assert row(conn, "notes/after")[1] == "After"
    finally:
        store.close()


def test_a_nul_past_the_binary_check_neither_fails_the_batch_nor_reaches_the_database(indexed):
    """scan.read_page takes a file for binary by a NUL in its first 8 KiB; PostgreSQL text cannot hold
    one anywhere, so a later NUL must not fail the batch that holds the vault's other changes."""
    vault, indexer, conn, _ = indexed
    write(vault, "notes/long.md", "# Long\n\n" + "word " * 2000 + "\x00 after the check, [[Alice Example]]\n")
    write(vault, "notes/plain.md", "# Plain\n\nIndexed in the same batch.\n")
    report = indexer.apply(["notes/long.md", "notes/plain.md"])
    assert report["parsed"] == 2 and report["skipped"] == 0
    assert row(conn, "notes/plain")[1] == "Plain" and row(conn, "notes/long")[1] == "Long"
    assert target_of(conn, "notes/long") == ["people/alice-example"]


def test_a_nul_in_a_name_or_query_finds_nothing_instead_of_failing(indexed, pg_dsn):
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.visibility import Viewer

    vault, _, _, _ = indexed
    store = PgPagesStore(pg_dsn, vault)
    try:
        world = Viewer.world()
        assert isinstance(store.resolve_name("Alice\x00Example", world), list)   # slugify drops the NUL
        assert store.resolve_alias("Al\x00ly", world) == []
        assert store.page("people/alice-example\x00", world) is None
        assert store.visible_slugs(["a\x00b"], world) == ["a\x00b"]
        assert [h["slug"] for h in store.search("boat\x00club", 5, world)[0]] == ["people/alice-example"]
    finally:
        store.close()


@pytest.mark.parametrize("full", [True, False], ids=["whole-vault pass", "events"])
def test_two_files_of_one_slug_index_one_and_the_other_when_it_goes(indexed, full):
    vault, indexer, conn, _ = indexed
    write(vault, "notes/Plan B.md", "# Plan\n\nFirst.\n")
    write(vault, "notes/plan-b.md", "# Plan\n\nSecond.\n")
    indexer.reconcile() if full else indexer.apply(["notes/Plan B.md", "notes/plan-b.md"])
    first = row(conn, "notes/plan-b")[3]
    other = ({"notes/Plan B.md", "notes/plan-b.md"} - {first}).pop()
    kinds = conn.execute("SELECT path, kind FROM problems ORDER BY path").fetchall()
    assert sorted(kinds) == sorted([(first, "slug_collision"), (other, "slug_collision")])
    os.remove(vault / first)
    indexer.reconcile() if full else indexer.apply([first])
    assert row(conn, "notes/plan-b")[3] == other
    assert conn.execute("SELECT count(*) FROM problems").fetchone()[0] == 0


def test_names_of_any_length_are_indexed(indexed, pg_dsn):
    """A title, alias, heading or link target past a b-tree entry's ~2.7 kB (the SQLite tables take
    any length) is indexed and found by name, and the batch around it goes on."""
    import random

    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.visibility import Viewer

    vault, indexer, conn, _ = indexed
    rng = random.Random(5)
    long_name = " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)) for _ in range(600))
    write(vault, "notes/huge.md", f"---\ntitle: {long_name}\naliases: [{long_name[:4000]}]\n---\n"
                                  f"# {long_name[:5000]}\n\nBody text. [[{long_name[:3000]}]]\n")
    write(vault, "notes/small.md", "# Small\n\nBeside it.\n")
    report = indexer.apply(["notes/huge.md", "notes/small.md"])
    assert report["parsed"] == 2 and report["skipped"] == 0
    store = PgPagesStore(pg_dsn, vault)
    try:
        assert store.resolve_entity(long_name, Viewer.world()) == "notes/huge"
        assert store.resolve_alias(long_name[:4000], Viewer.world()) == ["notes/huge"]
        assert store.titled(long_name, Viewer.world(), 5)[0].slug == "notes/huge"
    finally:
        store.close()


def test_a_page_the_database_refuses_is_reported_and_the_batch_goes_on(indexed):
    """A path past a b-tree entry's limit (deep folders of long names: the file system takes 4 kB) is
    refused by the unique index; the batch is applied again page by page, the rest indexed."""
    import random

    vault, indexer, conn, _ = indexed
    rng = random.Random(9)
    deep = "/".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(200)) for _ in range(15))
    write(vault, f"{deep}/page.md", "# Deep\n\nFar down.\n")
    write(vault, "notes/beside.md", "# Beside\n\nIndexed all the same.\n")
    report = indexer.apply([f"{deep}/page.md", "notes/beside.md"])
    assert report["parsed"] == 1 and report["skipped"] == 1
    assert row(conn, "notes/beside")[1] == "Beside"
    kind, detail = conn.execute("SELECT kind, detail FROM problems WHERE path = %s", (f"{deep}/page.md",)).fetchone()
    assert kind == "index_error" and "refused" in detail
