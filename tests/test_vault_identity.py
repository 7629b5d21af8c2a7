"""A client talks only to a daemon that serves the same vault folder (docs/architecture.md, "The vault folder")."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, child_env, configured, daemon, daemon_pids_for, reaper, small_vault,
)

pytestmark = pytest.mark.usefixtures("reaper")


def _brain(vault, *args):
    env = child_env()
    env["BRAIN_VAULT"] = str(vault)
    return subprocess.run([BRAIN, *args], capture_output=True, text=True, env=env, timeout=90)


def _facts(vault) -> str:
    from conftest import facts_log_lines

    return "\n".join(facts_log_lines(vault))


def test_a_copied_vault_is_served_by_its_own_daemon(daemon, places, tmp_path):
    a = daemon["vault"]
    r = _brain(a, "remember", "alpha before the copy", "--provenance", "t")
    assert r.returncode == 0, r.stderr
    b = tmp_path / "copy"
    shutil.copytree(a, b, symlinks=True)  # `cp -r`: the .brain folder and its lock stamp come along
    r = _brain(a, "remember", "alpha-secret after the copy", "--provenance", "t", "--visibility", "private")
    assert r.returncode == 0, r.stderr

    r = _brain(b, "remember", "beta only in the copy", "--provenance", "t")
    assert r.returncode == 0, r.stderr
    assert "beta only in the copy" in _facts(b)
    assert "beta only in the copy" not in _facts(a)

    r = _brain(b, "recall", "alpha-secret", "--json")
    assert r.returncode == 0, r.stderr
    assert "alpha-secret" not in r.stdout
    assert "alpha-secret" in _brain(a, "recall", "alpha-secret", "--json").stdout  # the local lane sees it
    # a second daemon, for the copy
    pids = daemon_pids_for(str(tmp_path))
    assert len(pids) == 2 and daemon["pid"] in pids

    r = _brain(b, "daemon", "start")
    assert r.returncode == 0, r.stderr
    assert "pid None" not in r.stdout
    m = re.search(r"pid (\d+)", r.stdout)
    assert m and int(m.group(1)) in pids and int(m.group(1)) != daemon["pid"], r.stdout


def test_daemon_refuses_a_preamble_for_another_vault(daemon, tmp_path):
    import socket

    from brain.daemon.client.probe import vault_identity

    other = tmp_path / "elsewhere"
    other.mkdir()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(daemon["socket"]))
    s.sendall(json.dumps({"surface": "full", "lane": "local", "client": "t",
                          "vault": vault_identity(other)}).encode() + b"\n")
    reply = json.loads(s.makefile("rb").readline())
    s.close()
    assert reply["error"]["code"] == -32600
    assert str(daemon["vault"]) in reply["error"]["message"]

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(daemon["socket"]))
    s.sendall(json.dumps({"surface": "full", "lane": "local", "client": "t",
                          "vault": vault_identity(daemon["vault"])}).encode() + b"\n")
    reply = json.loads(s.makefile("rb").readline())
    s.close()
    assert reply["brain_daemon"]["pid"] == daemon["pid"]
    assert reply["brain_daemon"]["vault"] == str(daemon["vault"])


def test_a_folder_replaced_under_its_daemon_gets_a_fresh_one(daemon, places, reaper):
    from brain.daemon.client.probe import find_daemon
    from brain.daemon.client.spawn import connect_or_start

    vault = daemon["vault"]
    shutil.move(str(vault), str(vault) + "-old")
    shutil.copytree(str(vault) + "-old", vault)
    # the old daemon still listens on the path's socket; asked, it says it serves another folder and stops
    s, started = connect_or_start(places, vault)
    s.close()
    reaper()
    assert started
    found = find_daemon(places, vault)
    assert found is not None and found["pid"] != daemon["pid"]
