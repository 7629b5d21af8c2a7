"""A newcomer's first run, as a person types it: real subprocesses, a real daemon,
the real MiniLM model. Nothing may print an error or a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain import __version__

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(env: dict, *args, timeout: float = 180) -> subprocess.CompletedProcess:
    r = subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, timeout=timeout)
    for stream in (r.stdout, r.stderr):
        assert "Traceback" not in stream, (args, stream)
    return r


@pytest.fixture
def env(brain_home, tmp_path) -> dict:
    e = dict(os.environ, BRAIN_HOME=str(brain_home), HF_HUB_OFFLINE="1", HOME=str(tmp_path / "home"))
    e.pop("BRAIN_VAULT", None)
    (tmp_path / "home").mkdir()
    return e


@pytest.fixture
def notes(sample_vault) -> Path:
    """An ordinary vault: the sample notes without a page about its owner."""
    (sample_vault / "people" / "me.md").unlink()
    return sample_vault


@pytest.mark.model
def test_a_newcomer_run_prints_no_error_and_no_traceback(env, notes):
    r = brain(env)  # no arguments: what brain is and what to run first
    assert r.returncode == 0 and "no vault registered yet" in r.stdout and "brain init" in r.stdout, r

    r = brain(env, "init", str(notes))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert re.search(r"keyword search ready: \d+ pages, \d+ chunks", r.stdout), r.stdout
    assert "semantic search" in r.stdout and "next: " in r.stdout, r.stdout

    r = brain(env, "status")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "keyword search: ready" in r.stdout and "semantic search: " in r.stdout and "next: " in r.stdout

    for fact, kind in (("I prefer dark mode in every editor", "preference"),
                       ("I will write the cut-over runbook by Friday", "commitment")):
        r = brain(env, "remember", fact, "--provenance", "me", "--entity", "people/me", "--kind", kind)
        assert r.returncode == 0 and "remembered as fact" in r.stdout, r.stderr

    r = brain(env, "recall", "who is leading the billing migration?", "--limit", "3")
    assert r.returncode == 0 and r.stderr == "" and "billing" in r.stdout.lower(), r
    assert "not loaded" not in r.stdout  # a search answered keyword-only must not claim a cause it cannot know

    r = brain(env, "entity", "people/me")  # facts only, no page: still a card
    assert r.returncode == 0 and "no such entity" not in r.stdout, r.stdout
    assert "2 active facts" in r.stdout and "cut-over runbook" in r.stdout, r.stdout

    for page in ("projects/billing-retirement", "projects/billing-retirement.md"):  # a slug or its file
        r = brain(env, "get", page)
        assert r.returncode == 0 and r.stderr == "" and "billing" in r.stdout.lower(), r

    # the hook's 1.5 s deadline is for a person's machine, not a loaded CI runner
    assert brain(env, "config", "set", "hooks.deadline_ms", "30000").returncode == 0
    r = brain(env, "doctor")
    assert r.returncode == 0 and r.stderr == "" and "✗" not in r.stdout, r.stdout

    r = brain(env)
    assert r.returncode == 0 and f"vault: {notes}" in r.stdout and "next: " in r.stdout, r.stdout


def test_version(env):
    for flag in ("--version", "-V"):
        r = brain(env, flag)
        assert r.returncode == 0 and r.stdout.strip() == f"brain {__version__}"


def _running(vault: Path) -> list[str]:
    ps = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if "brain.daemon.server" in line and f"--vault {vault}" in line]


def test_switching_vaults_stops_the_old_daemon_and_none_is_lost(env, tmp_path):
    first, second, third = (tmp_path / n for n in ("first", "second", "third"))
    for v in (first, second, third):
        v.mkdir()
        (v / "note.md").write_text(f"# {v.name}\n\nA note in the {v.name} vault.\n")
    assert brain(env, "init", str(first), "--no-daemon").returncode == 0
    assert brain(env, "config", "set", "embeddings.enabled", "false").returncode == 0
    assert brain(env, "daemon", "start").returncode == 0 and _running(first)

    r = brain(env, "init", str(second), "--no-daemon")
    assert r.returncode == 0 and f"previous vault {first}: daemon stopped pid" in r.stdout, r.stdout
    deadline = time.monotonic() + 10
    while _running(first) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(first)

    # a daemon of a vault used before (here started by hand) stays visible and stoppable
    assert brain(env, "daemon", "start").returncode == 0
    assert brain(env | {"BRAIN_VAULT": str(third)}, "daemon", "start").returncode == 0
    r = brain(env, "daemon", "status")
    assert r.returncode == 0 and f"for another vault, {third}" in r.stdout and "--all" in r.stdout, r.stdout
    r = brain(env, "daemon", "stop", "--all")
    assert r.returncode == 0 and f"daemon for {second}: stopped pid" in r.stdout
    assert f"daemon for {third}: stopped pid" in r.stdout
    assert not _running(second) and not _running(third)
    assert "no daemon running" in brain(env, "daemon", "stop", "--all").stdout


def test_status_before_the_first_index_names_the_next_step(env, tmp_path):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "a.md").write_text("# A\n\nText.\n")
    assert brain(env, "init", str(tmp_path / "v"), "--no-daemon", "--create").returncode == 0
    r = brain(env, "status")
    assert r.returncode == 0 and "keyword search: not built yet" in r.stdout
    assert "next: `brain daemon start`" in r.stdout, r.stdout
    r = brain(env)
    assert r.returncode == 0 and "next: `brain daemon start`" in r.stdout, r.stdout
