"""One symlink rule for scan, watch, get_page, put_page and atomic writes (README "Symlinks")."""

from __future__ import annotations

import os

import pytest

from indexer_fixtures import open_index, wait_for, write  # noqa: F401  (fixture)

from brain.indexer.vault.atomic_files import write_atomic
from brain.indexer.vault.vault_files import PageWriteError
from brain.indexer.vault.visibility import Viewer


@pytest.fixture
def outside(tmp_path):
    d = tmp_path / "elsewhere"
    d.mkdir()
    (d / "secret.md").write_text("# Secret\n\nOUTSIDE-MARKER lives outside the vault.\n")
    return d


def _slugs(e):
    return sorted(r[0] for r in e.page_db.execute("SELECT slug FROM pages"))


def _problems(e):
    return {(r["path"], r["kind"]) for r in e.index.problems()}


def test_links_leading_outside_are_not_indexed_and_are_reported(vault, outside, open_index):
    write(vault, "home.md", "# Home\n")
    os.symlink(outside, vault / "linkdir")
    os.symlink(outside / "secret.md", vault / "leak.md")
    os.makedirs(vault / "real")
    write(vault, "real/inner.md", "# Inner\n")
    os.symlink(vault / "real" / "inner.md", vault / "alias.md")  # stays inside: followed
    e = open_index(vault)
    assert _slugs(e) == ["alias", "home", "real/inner"]
    assert {("linkdir", "symlink_outside"), ("leak.md", "symlink_outside")} <= _problems(e)
    assert e.pages.get_page("leak", Viewer.owner()) is None
    results, _ = e.pages.search("OUTSIDE-MARKER", 5, Viewer.owner())
    assert results == []


def test_get_page_never_reads_through_a_link_swapped_to_outside(vault, outside, open_index):
    write(vault, "note.md", "# Note\n")
    e = open_index(vault)
    os.unlink(vault / "note.md")
    os.symlink(outside / "secret.md", vault / "note.md")
    assert e.pages.get_page("note", Viewer.owner()) is None


def test_put_page_never_writes_outside_through_a_folder_link(vault, outside, open_index):
    os.symlink(outside, vault / "linkdir")
    e = open_index(vault)
    with pytest.raises(PageWriteError) as err:
        e.index.put_page("linkdir/new", "# New\n", viewer=Viewer.world())
    assert "outside the vault" in err.value.message
    assert not (outside / "new.md").exists()
    with pytest.raises(PageWriteError):
        e.index.put_page("linkdir/secret", "overwritten", viewer=Viewer.world())
    assert "OUTSIDE-MARKER" in (outside / "secret.md").read_text()


def test_put_page_never_replaces_a_file_link(vault, outside, open_index):
    os.symlink(outside / "secret.md", vault / "leak.md")
    os.makedirs(vault / "real")
    write(vault, "real/inner.md", "# Inner\n")
    os.symlink(vault / "real" / "inner.md", vault / "alias.md")
    e = open_index(vault)
    with pytest.raises(PageWriteError):
        e.index.put_page("leak", "overwritten", viewer=Viewer.owner())
    assert os.path.islink(vault / "leak.md")
    assert "OUTSIDE-MARKER" in (outside / "secret.md").read_text()
    # a link inside the vault: the write lands in its target and the link stays
    e.index.put_page("alias", "# Inner\n\nrewritten through the alias\n", viewer=Viewer.owner())
    assert os.path.islink(vault / "alias.md")
    assert "rewritten through the alias" in (vault / "real" / "inner.md").read_text()
    assert "rewritten" in e.pages.get_page("real/inner", Viewer.owner())["content"]


def test_the_watcher_skips_a_link_to_outside(vault, outside, open_index):
    write(vault, "home.md", "# Home\n")
    e = open_index(vault, watch=True)
    os.symlink(outside / "secret.md", vault / "late.md")
    write(vault, "later.md", "# Later\n")
    assert wait_for(lambda: "later" in _slugs(e))
    assert "late" not in _slugs(e)
    assert wait_for(lambda: ("late.md", "symlink_outside") in _problems(e))


def test_write_atomic_writes_a_links_target_and_keeps_the_link(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text("{}")
    os.chmod(dotfiles / "settings.json", 0o640)
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(dotfiles / "settings.json", home / "settings.json")
    write_atomic(home / "settings.json", b'{"a": 1}')
    assert os.path.islink(home / "settings.json")
    assert (dotfiles / "settings.json").read_text() == '{"a": 1}'
    assert os.stat(dotfiles / "settings.json").st_mode & 0o777 == 0o640
    assert not [p for p in dotfiles.iterdir() if p.name.endswith(".tmp")]


def test_write_atomic_refuses_to_leave_its_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(tmp_path, root / "up")
    with pytest.raises(PermissionError):
        write_atomic(root / "up" / "x.md", b"x", within=root)
    assert not (tmp_path / "x.md").exists()


def test_doctor_lists_links_leading_outside(vault, outside, places):
    import json
    import subprocess

    from daemon_fixtures import BRAIN, child_env

    from brain.daemon import config as config_mod

    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    write(vault, "home.md", "# Home\n")
    os.symlink(outside, vault / "linkdir")
    r = subprocess.run([BRAIN, "doctor", "index", "--json"], capture_output=True, text=True,
                       env={**child_env(), "BRAIN_VAULT": str(vault)}, timeout=90)
    rows = json.loads(r.stdout)
    hits = [x for x in rows if x["check"] == "links leading outside the vault" and x["status"] == "warn"]
    assert hits and "linkdir" in hits[0]["detail"] and str(outside) in hits[0]["detail"]


def test_a_link_into_a_dot_folder_is_not_a_page(vault, open_index):
    e = open_index(vault)
    _insert = e.facts.insert(fact="PRIVATE-FACT-MARKER", kind="fact", entity_slug=None, visibility="private",
                             source="t", valid_until=None)
    assert _insert
    from conftest import facts_logs

    log, = facts_logs(vault)
    os.symlink(log, vault / "facts-view.md")
    os.makedirs(vault / ".obsidian")
    write(vault, ".obsidian/hidden.md", "# Hidden\n")
    os.symlink(vault / ".obsidian", vault / "shown")
    e.index.reconcile()
    assert "facts-view" not in _slugs(e) and "shown/hidden" not in _slugs(e)
    assert e.pages.get_page("facts-view", Viewer.world()) is None
    with pytest.raises(PageWriteError):
        e.index.put_page("facts-view", "overwritten", viewer=Viewer.owner())
    assert "PRIVATE-FACT-MARKER" in log.read_text()
    assert {("facts-view.md", "symlink_outside"), ("shown", "symlink_outside")} <= _problems(e)
