"""`<vault>/.brain` must be a real folder inside the vault, or brain writes nothing there.

A `.brain` that is a symlink to a folder outside the vault would carry the
facts log, the writer lock and held pages there (docs/architecture.md
"Symlinks"); brain refuses and names the fix.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import call
from daemon_fixtures import BRAIN, child_env, reaper  # noqa: F401  (fixtures)
from indexer_fixtures import open_index, write  # noqa: F401

from brain.daemon.server.vault_engine import VaultEngine
from brain.indexer.vault.brain_folder import BrainFolderError, brain_folder

pytestmark = pytest.mark.usefixtures("reaper")


@pytest.fixture
def outside(tmp_path):
    o = tmp_path / "elsewhere"
    o.mkdir()
    return o


def _linked(vault, outside):
    write(vault, "notes/a.md", "# A\n\nA page.\n")
    os.symlink(outside, vault / ".brain")
    return vault


def test_the_engine_refuses_a_brain_folder_that_is_a_link(vault, outside, places):
    _linked(vault, outside)
    with pytest.raises(BrainFolderError) as e:
        VaultEngine(vault, places, {}, writer="test")
    assert "symlink" in str(e.value) and "fix:" in str(e.value) and str(outside) in str(e.value)
    assert list(outside.iterdir()) == []   # no lock, no facts log written through the link


def test_a_file_named_brain_is_refused_too(vault, places):
    (vault / ".brain").write_text("not a folder")
    with pytest.raises(BrainFolderError) as e:
        brain_folder(vault)
    assert "not a folder" in str(e.value) and "fix:" in str(e.value)


def test_daemon_and_cli_refuse_and_say_why(vault, outside, places):
    from brain.daemon import config as config_mod

    _linked(vault, outside)
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    env = {**child_env(), "BRAIN_VAULT": str(vault)}
    r = subprocess.run([BRAIN, "remember", "the door code is 4321", "--provenance", "t"], capture_output=True,
                       text=True, env=env, timeout=90)
    assert r.returncode != 0 and "symlink" in r.stderr and "fix:" in r.stderr, r.stderr
    r = subprocess.run([BRAIN, "remember", "the door code is 4321", "--provenance", "t", "--no-daemon"],
                       capture_output=True, text=True, env=env, timeout=90)
    assert r.returncode != 0 and "symlink" in r.stderr, r.stderr
    assert list(outside.iterdir()) == []
    r = subprocess.run([BRAIN, "doctor", "config", "--json"], capture_output=True, text=True, env=env, timeout=90)
    rows = [x for x in json.loads(r.stdout) if x["check"] == "brain folder"]
    assert rows and rows[0]["status"] == "fail" and "symlink" in rows[0]["detail"]


def test_held_pages_never_go_through_a_link_swapped_in_later(vault, outside, open_index, remote):
    write(vault, "secret/plan.md", "---\nvisibility: private\n---\nPlan.\n")
    e = open_index(vault)
    os.rename(vault / ".brain", vault.parent / "brain-moved")
    os.symlink(outside, vault / ".brain")
    body, err = call(e, "put_page", {"slug": "secret/plan", "content": "agent text"}, remote)
    assert not err and body["created"] is True
    assert (vault / "secret/plan.md").read_text() == "---\nvisibility: private\n---\nPlan.\n"
    assert list(outside.iterdir()) == []


def test_a_lock_file_that_is_a_link_is_refused(vault, outside, places):
    (vault / ".brain").mkdir()
    os.symlink(outside / "lock", vault / ".brain" / "writer.lock")
    with pytest.raises(BrainFolderError) as e:
        VaultEngine(vault, places, {}, writer="test")
    assert "writer.lock" in str(e.value) and "fix:" in str(e.value)
    assert list(outside.iterdir()) == []


def test_a_remember_never_goes_through_a_brain_folder_swapped_for_a_link(vault, outside, open_index, remote):
    # the device and inode check of the facts log alone would follow the new link and write there
    e = open_index(vault)
    body, err = call(e, "remember", {"fact": "before the swap", "provenance": "t"}, remote)
    assert not err, body
    os.rename(vault / ".brain", vault.parent / "brain-moved")
    os.symlink(outside, vault / ".brain")
    body, err = call(e, "remember", {"fact": "after the swap", "provenance": "t"}, remote)
    assert err and body["error"] == "unavailable", body
    assert str(vault) not in json.dumps(body) and str(outside) not in json.dumps(body)
    assert list(outside.iterdir()) == []
