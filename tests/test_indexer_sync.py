"""Live sync with a real watchdog observer: saves, atomic saves, renames, deletes, bursts."""

import errno
import os
import subprocess

from indexer_fixtures import open_index, page, wait_for, write  # noqa: F401
from brain.indexer.vault.visibility import Viewer


def _found(e, query, slug):
    results, _ = e.pages.search(query, 10, Viewer.owner())
    return slug in [r["slug"] for r in results]


def test_create_modify_delete_are_followed(vault, open_index):
    e = open_index(vault, watch=True)
    assert e.index.sync.mode == "inotify"
    write(vault, "notes/new.md", "pelican facts")
    assert wait_for(lambda: _found(e, "pelican", "notes/new"))
    write(vault, "notes/new.md", "albatross facts instead")
    assert wait_for(lambda: _found(e, "albatross", "notes/new"))
    assert not _found(e, "pelican", "notes/new")
    os.unlink(vault / "notes/new.md")
    assert wait_for(lambda: page(e.page_db, "notes/new") is None)


def test_atomic_save_is_one_modify_and_keeps_the_page(vault, open_index):
    p = write(vault, "people/ann.md", "version one")
    e = open_index(vault, watch=True)
    pid = page(e.page_db, "people/ann")["id"]
    parsed = e.index.stats["parsed"]
    # what editors do: write a temp file beside the page, then rename it over
    tmp = vault / "people" / ".ann.md.swp"
    tmp.write_text("version two, saved atomically")
    os.replace(tmp, p)
    assert wait_for(lambda: _found(e, "atomically", "people/ann"))
    assert e.index.sync.flush()
    assert page(e.page_db, "people/ann")["id"] == pid
    assert e.index.stats["parsed"] == parsed + 1 and e.index.stats["deleted"] == 0


def test_rename_and_folder_move_keep_identity_and_re_resolve_links(vault, open_index):
    write(vault, "people/kim.md", "Kim page")
    write(vault, "index.md", "[[people/kim]] and [[kim-lee]]")
    e = open_index(vault, watch=True)
    pid = page(e.page_db, "people/kim")["id"]
    os.rename(vault / "people/kim.md", vault / "people/kim-lee.md")
    assert wait_for(lambda: page(e.page_db, "people/kim-lee") is not None and page(e.page_db, "people/kim") is None)
    assert page(e.page_db, "people/kim-lee")["id"] == pid
    targets = lambda: [r[0] for r in e.page_db.execute(  # noqa: E731
        "SELECT t.slug FROM links l LEFT JOIN pages t ON t.id = l.to_id ORDER BY l.id")]
    assert wait_for(lambda: targets() == [None, "people/kim-lee"])
    os.rename(vault / "people", vault / "team")
    assert wait_for(lambda: page(e.page_db, "team/kim-lee") is not None)
    assert page(e.page_db, "team/kim-lee")["id"] == pid and page(e.page_db, "people/kim-lee") is None
    assert targets() == [None, "team/kim-lee"]


def test_a_burst_of_1000_files_is_applied_in_a_few_batches(vault, open_index):
    e = open_index(vault, watch=True)
    commits = e.index.stats["commits"]
    script = ("import sys, os\n"
              "root = sys.argv[1]\n"
              "os.makedirs(os.path.join(root, 'bulk'), exist_ok=True)\n"
              "for i in range(1000):\n"
              "    open(os.path.join(root, 'bulk', f'p{i:04d}.md'), 'w').write(f'burst page {i} marker{i}')\n")
    subprocess.run([os.sys.executable, "-c", script, str(vault)], check=True)
    assert wait_for(lambda: e.page_db.execute("SELECT COUNT(*) FROM pages").fetchone()[0] == 1000, timeout=60)
    assert e.index.sync.flush(30)
    assert e.index.stats["commits"] - commits <= 12  # batches, not 1,000 commits
    assert _found(e, "marker999", "bulk/p0999")


def test_put_page_is_not_re_indexed_by_its_own_watch_event(vault, open_index, remote):
    from conftest import call

    e = open_index(vault, watch=True)
    body, err = call(e, "put_page", {"slug": "notes/own", "content": "written by put_page"}, remote)
    assert not err and _found(e, "written", "notes/own")
    parsed = e.index.stats["parsed"]
    assert e.index.sync.flush()
    import time

    time.sleep(0.4)  # let the rename's event arrive and be applied
    assert e.index.sync.flush()
    assert e.index.stats["parsed"] == parsed


def test_the_sync_loop_survives_bad_files(vault, open_index):
    e = open_index(vault, watch=True)
    write(vault, "bin.md", b"\x00\x01\x02")
    write(vault, "bad.md", b"\xff\xfe broken \xc3")
    write(vault, "ok.md", "still fine")
    assert wait_for(lambda: _found(e, "fine", "ok"))
    kinds = {p["kind"] for p in e.index.problems()}
    assert {"binary", "invalid_utf8"} <= kinds
    write(vault, "later.md", "after the bad ones")
    assert wait_for(lambda: _found(e, "after", "later"))


def test_polling_observer_when_inotify_is_exhausted(vault, open_index):
    class ExhaustedInotify:
        """Stands in for the kernel refusing a watch (fs.inotify.max_user_watches reached)."""

        def schedule(self, *a, **kw):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

        def stop(self):
            pass

    e = open_index(vault, watch=True, observer_factory=ExhaustedInotify, poll_interval_s=0.2)
    sync = e.index.sync
    assert sync.mode == "polling" and "max_user_watches" in sync.warning
    write(vault, "polled.md", "seen by polling")
    assert wait_for(lambda: _found(e, "polling", "polled"))
