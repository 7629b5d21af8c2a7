"""`brain context` with no entities shows what the session-start hook would inject
from this folder: the same entities, the same budget, the same text."""

from __future__ import annotations

import json
import os
import subprocess
import sys

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args, cwd, stdin=None):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120, input=stdin, cwd=str(cwd),
                          env=dict(os.environ, NO_COLOR="1"))


def test_context_alone_prints_what_the_hook_injects_here(tmp_path):
    notes = tmp_path / "notes"
    (notes / "people").mkdir(parents=True)
    (notes / "projects").mkdir()
    (notes / "people" / "me.md").write_text("---\ntitle: Robin\n---\n# Robin\n\nWrites the ledger.\n")
    (notes / "projects" / "lighthouse.md").write_text("---\ntitle: Lighthouse\n---\n# Lighthouse\n\nHarbour.\n")
    repo = tmp_path / "code" / "lighthouse"
    (repo / ".git").mkdir(parents=True)
    assert brain("init", str(notes), "--no-daemon", cwd=tmp_path).returncode == 0
    assert brain("config", "set", "embeddings.enabled", "false", cwd=tmp_path).returncode == 0
    assert brain("remember", "Robin prefers tea", "--provenance", "t", "--entity", "people/me", "--no-daemon",
                 cwd=tmp_path).returncode == 0

    r = brain("context", "--no-daemon", cwd=repo)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("(what the session-start hook injects here: people/me, lighthouse, from "
                        "hooks.standing_entities and this repository (lighthouse); budget 1500 tokens)")
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    hook = brain("hook", "session-start", "--no-daemon", cwd=repo, stdin=json.dumps(payload))
    injected = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "\n".join(lines[1:-1]) == injected  # the same text, byte for byte
    assert "Robin prefers tea" in injected and "Lighthouse" in injected
    assert lines[-1].startswith("(budget ")

    bare = brain("context", "--no-daemon", "--json", cwd=tmp_path)  # outside a repository: the standing ones only
    assert bare.returncode == 0 and json.loads(bare.stdout)["cards"][0]["slug"] == "people/me"
    assert "people/me, from hooks.standing_entities;" in bare.stderr


def test_context_alone_with_nothing_standing_names_the_fix(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n")
    assert brain("init", str(notes), "--no-daemon", cwd=tmp_path).returncode == 0
    assert brain("config", "set", "hooks.standing_entities", "", cwd=tmp_path).returncode == 0
    r = brain("context", "--no-daemon", cwd=tmp_path)
    assert r.returncode == 2 and "hooks.standing_entities" in r.stderr and "fix:" in r.stderr
