"""Open tasks elsewhere that link a page (the pages store's `linked_tasks`), on each backend.

The same real vault is indexed by the embedded indexer and, on a real
PostgreSQL server, by its vault indexer (skipped only without the `postgres`
extra); both stores must give the same answers: tasks in lists, nested lists
and callouts that link the page by any link form, newest date first, one per
task line, never a checked task or one in a code fence, never a task on a
private page for the world, and a task whose page did not exist yet once it
does (docs/architecture.md, "Open tasks").
"""

from __future__ import annotations

import datetime as dt
import os

import pytest

from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)

PRIYA = """---
title: Priya Raman
---
# Priya Raman

Counsel at the ledger firm.
"""

DAILY = """# 2026-12-01

- [ ] send [[Priya Raman|Priya]] the contract
- [x] thank [[Priya Raman]] for the notes
- [ ] lunch with [[Priya Raman]] and [[people/priya-raman|her]] 📅 2026-12-09

> [!todo] Errands
> - [ ] call the bank about [Priya's account](../people/priya-raman.md)
> > - [ ] courier the deed to [[Priya Raman#Office]] 📅 2026-12-02

```markdown
- [ ] an example mentioning [[Priya Raman]]
```

Met [[Priya Raman]] at the office.
"""

SECRET = """---
visibility: private
---
# Quiet plans

- [ ] SECRET-TASK ask [[Priya Raman]] about the move
"""

LATER = """# Later

- [ ] brief [[Nora Quill]] on the audit
"""

NORA = "# Nora Quill\n\nAuditor.\n"


# the daily note was last changed between its two due dates
DAILY_CHANGED = dt.datetime(2026, 12, 5, 12, tzinfo=dt.timezone.utc).timestamp()


def write_vault(vault) -> None:
    write(vault, "people/priya-raman.md", PRIYA)
    daily = write(vault, "daily/2026-12-01.md", DAILY)
    os.utime(daily, (DAILY_CHANGED, DAILY_CHANGED))
    write(vault, "notes/quiet-plans.md", SECRET)
    write(vault, "notes/later.md", LATER)


def embedded(vault, open_index, request):  # noqa: F811
    """(the engine's SQLite pages store, index the vault again)"""
    engine = open_index(vault)
    return engine.pages, engine.index.reconcile


def postgres(vault, open_index, request):  # noqa: F811
    """(the PostgreSQL pages store, index the vault again), loaded by its vault indexer."""
    dsn = request.getfixturevalue("pg_dsn")   # skips when the postgres extra is missing
    from brain.daemon.postgres.indexer import PgVaultIndexer
    from brain.daemon.postgres.pages_store import PgPagesStore

    def reconcile():
        indexer = PgVaultIndexer(vault, dsn)
        try:
            indexer.reconcile()
        finally:
            indexer.close()

    reconcile()
    pages = PgPagesStore(dsn, vault)
    request.addfinalizer(pages.close)
    return pages, reconcile


@pytest.fixture(params=[embedded, postgres], ids=["embedded", "postgres"])
def store(vault, open_index, request):  # noqa: F811
    write_vault(vault)
    return request.param(vault, open_index, request)


def test_open_tasks_that_link_a_page_newest_date_first(store):
    from brain.indexer.vault.visibility import Viewer

    pages, _ = store
    daily = pages.page("daily/2026-12-01", Viewer.owner())
    tasks = pages.linked_tasks("people/priya-raman", Viewer.world(), 10)
    assert [(t.slug, t.text, t.due) for t in tasks] == [
        ("daily/2026-12-01", "lunch with [[Priya Raman]] and [[people/priya-raman|her]] 📅 2026-12-09",
         "2026-12-09"),
        # the page's last change (2026-12-05) dates a task without a due date; then page order
        ("daily/2026-12-01", "send [[Priya Raman|Priya]] the contract", None),
        ("daily/2026-12-01", "call the bank about [Priya's account](../people/priya-raman.md)", None),
        ("daily/2026-12-01", "courier the deed to [[Priya Raman#Office]] 📅 2026-12-02", "2026-12-02"),
    ]
    assert {t.updated_at for t in tasks} == {daily.updated_at} and daily.updated_at.startswith("2026-12-05T12:00")
    assert len(pages.linked_tasks("people/priya-raman", Viewer.world(), 2)) == 2


def test_a_task_on_a_private_page_reaches_the_owner_only(store):
    from brain.indexer.vault.visibility import Viewer

    pages, _ = store
    owner = [t.text for t in pages.linked_tasks("people/priya-raman", Viewer.owner(), 10)]
    world = [t.text for t in pages.linked_tasks("people/priya-raman", Viewer.world(), 10)]
    assert "SECRET-TASK ask [[Priya Raman]] about the move" in owner
    assert not [t for t in world if "SECRET" in t] and len(owner) == len(world) + 1
    # a private page's own tasks elsewhere are not asked about for the world at all
    assert pages.linked_tasks("notes/quiet-plans", Viewer.world(), 10) == []


def test_a_task_linking_a_page_not_yet_written_arrives_with_the_page(store, vault):
    from brain.indexer.vault.visibility import Viewer

    pages, reconcile = store
    assert pages.linked_tasks("people/nora-quill", Viewer.owner(), 10) == []
    write(vault, "people/nora-quill.md", NORA)
    reconcile()
    assert [(t.slug, t.text) for t in pages.linked_tasks("people/nora-quill", Viewer.owner(), 10)] == \
        [("notes/later", "brief [[Nora Quill]] on the audit")]


def test_ticking_the_task_off_takes_it_away(store, vault):
    from indexer_fixtures import bump_mtime

    from brain.indexer.vault.visibility import Viewer

    pages, reconcile = store
    path = write(vault, "notes/later.md", LATER.replace("- [ ]", "- [x]") + "\n[[Nora Quill]]\n")
    bump_mtime(path)
    write(vault, "people/nora-quill.md", NORA)
    reconcile()
    assert pages.linked_tasks("people/nora-quill", Viewer.owner(), 10) == []
    assert pages.backlink_count("people/nora-quill", Viewer.owner()) == 1   # the link itself stays an edge


def test_a_cache_from_before_task_links_is_re_read(vault, open_index):  # noqa: F811
    import sqlite3

    from brain.indexer.vault.visibility import Viewer

    write_vault(vault)
    engine = open_index(vault)
    cache = engine.cache_dir
    engine.close()
    # the tables as the previous version left them: no task on any link, files unchanged since
    db = sqlite3.connect(cache / "index.sqlite")
    db.execute("DROP INDEX links_task_to")
    db.execute("ALTER TABLE links DROP COLUMN task")
    db.execute("ALTER TABLE links DROP COLUMN due")
    db.execute("PRAGMA user_version = 6")
    db.commit()
    db.close()
    engine = open_index(vault)
    assert len(engine.pages.linked_tasks("people/priya-raman", Viewer.world(), 10)) == 4
