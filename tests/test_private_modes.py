"""Everything brain writes outside the vault, and the vault's .brain folder, is private (0700 / 0600).

Tests run as root, so they assert on modes, not on access denial.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, child_env, configured, daemon, reaper, small_vault,
)

from brain.daemon.client.calls import send

pytestmark = pytest.mark.usefixtures("reaper")


def _loose(*roots) -> list[str]:
    """Every folder not 0700 and every file (or socket) not 0600 under the roots."""
    bad = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for p in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    continue
                want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
                if stat.S_IMODE(st.st_mode) != want:
                    bad.append(f"{oct(stat.S_IMODE(st.st_mode))} {p}")
    return bad


def _use_everything(places, vault):
    for args in (["remember", "tea is private", "--provenance", "t", "--visibility", "private"],
                 ["recall", "tea"], ["auth", "token", "create", "laptop"]):
        r = subprocess.run([BRAIN, *args], capture_output=True, text=True, env=child_env(), timeout=90)
        assert r.returncode == 0, r.stderr
    body, is_error = send(places, vault, "put_page", {"slug": "notes/new-one", "content": "# New\n"})
    assert not is_error, body


def test_files_brain_writes_are_private_from_creation(daemon, places, brain_home):
    vault = daemon["vault"]
    _use_everything(places, vault)
    assert _loose(brain_home, vault / ".brain") == []
    # the vault's own notes keep ordinary modes: a new page and its new folder
    assert stat.S_IMODE(os.stat(vault / "notes").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(vault / "notes" / "new-one.md").st_mode) == 0o644


def test_the_in_process_cli_writes_private_caches(places, configured, brain_home):
    r = subprocess.run([BRAIN, "remember", "x", "--provenance", "t", "--no-daemon"], capture_output=True,
                       text=True, env=child_env(), timeout=90)
    assert r.returncode == 0, r.stderr
    assert _loose(brain_home, configured / ".brain") == []


def test_loose_modes_are_repaired_on_start_and_reported_by_doctor(places, configured, brain_home, reaper):
    from brain.daemon.client.spawn import connect_or_start
    from brain.daemon.client.stop import stop_daemon

    connect_or_start(places, configured)[0].close()
    reaper()
    stop_daemon(places, configured)
    cache = places.cache_dir(configured)
    os.chmod(cache, 0o755)
    os.chmod(cache / "facts.sqlite", 0o644)
    os.chmod(configured / ".brain", 0o755)
    os.chmod(places.config_file, 0o644)
    r = subprocess.run([BRAIN, "doctor", "permissions", "--json"], capture_output=True, text=True,
                       env=child_env(), timeout=90)
    rows = json.loads(r.stdout)
    text = "\n".join(f"{x['status']} {x['detail']}" for x in rows)
    assert r.returncode == 1, text
    assert str(cache / "facts.sqlite") in text and "chmod" in text and str(places.config_file) in text
    connect_or_start(places, configured)[0].close()
    reaper()
    assert _loose(brain_home, configured / ".brain") == []
    r = subprocess.run([BRAIN, "doctor", "permissions"], capture_output=True, text=True, env=child_env(), timeout=90)
    assert r.returncode == 0, r.stdout


def test_a_new_file_is_as_open_as_its_folder(tmp_path):
    # a sidecar written by a worker thread after the umask was set by someone
    # else must still be private in brain's folders, and a page as open as the vault
    from brain.indexer.vault.atomic_files import write_atomic

    private, notes = tmp_path / "cache", tmp_path / "notes"
    private.mkdir(mode=0o700)
    notes.mkdir(mode=0o755)
    os.chmod(notes, 0o755)
    write_atomic(private / "vectors.json", b"{}")
    write_atomic(notes / "page.md", b"# page\n")
    assert stat.S_IMODE(os.stat(private / "vectors.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(notes / "page.md").st_mode) == 0o644


@pytest.mark.parametrize("first", [["config", "set", "hooks.deadline_ms", "3000"], ["init", "NOTES", "--no-daemon"]])
def test_a_brain_home_made_under_a_world_writable_folder_is_private_from_creation(tmp_path, first):
    """A BRAIN_HOME under /tmp (1777) that brain creates itself, first touched by
    `brain config set` (before any daemon) or `brain init`: nothing inherits /tmp's mode."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n")
    home = shared / "new" / "bh"
    env = dict(child_env(), BRAIN_HOME=str(home))
    argv = [str(notes) if a == "NOTES" else a for a in first]
    r = subprocess.run([BRAIN, *argv], capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(shared / "new").st_mode) == 0o700  # brain made it: brain's, private
    assert (home / "config" / "config.toml").is_file()
    assert _loose(home) == []
