"""The terminal side of entity identity: get/open by alias, `brain facts move`, `brain facts
unfiled`, the doctor's finding and the hint's own page (docs/architecture.md, "Entity identity")."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def vault(tmp_path):
    v = tmp_path / "notes"
    (v / "people").mkdir(parents=True)
    (v / "people" / "Priya Raman.md").write_text("---\naliases: [Priya]\n---\n# Priya Raman\n\nLegal counsel.\n")
    (v / "people" / "Sam Ortiz.md").write_text("---\naliases: [me]\n---\n# Sam Ortiz\n\nThe owner.\n")
    r = brain("init", str(v), "--no-daemon")
    assert r.returncode == 0, r.stderr
    assert brain("index", "-q", "--keyword-only").returncode == 0
    return v


def test_get_and_open_take_an_alias_as_entity_does(vault):
    r = brain("get", "Priya", "--no-daemon")
    assert r.returncode == 0 and "# Priya Raman" in r.stdout, r.stderr
    r = subprocess.run([*BRAIN, "open", "priya"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, BRAIN_OPENER="true", VISUAL="", EDITOR=""))
    assert r.returncode == 0, r.stderr


def test_facts_move_files_a_name_under_a_page_and_doctor_stops_listing_it(vault):
    r = brain("remember", "Pri signs the contract on Monday", "-p", "user", "-e", "people/pri")
    assert r.returncode == 0, r.stderr
    doctor = brain("doctor", "entities")
    assert "filed under people/pri, which no page has" in doctor.stdout, doctor.stdout
    listed = brain("facts", "unfiled")
    assert listed.returncode == 0 and listed.stdout.startswith("people/pri: 1 active fact, no page"), listed.stdout
    moved = brain("facts", "move", "people/pri", "Priya")
    assert moved.returncode == 0, moved.stderr
    assert "1 active fact filed under people/pri now belongs to people/priya-raman" in moved.stdout
    card = brain("entity", "Priya", "--json")
    assert '"active_fact_count": 1' in card.stdout, card.stdout
    assert "every fact filed under an entity belongs to a page" in brain("doctor", "entities").stdout
    log = "".join(p.read_text() for p in (vault / ".brain" / "facts").glob("*.jsonl"))
    assert '"op":"move","from":"people/pri","to":"people/priya-raman"' in log
    assert '"entity_slug":"people/pri"' in log   # the line that filed it is as it was


def test_a_remote_caller_cannot_reach_the_owner_tools(vault):
    from brain.daemon.protocol.caller import Caller
    from brain.daemon.protocol.dispatch import dispatch

    body, err = dispatch(None, "facts_move", {"from": "a", "to": "b"}, Caller())
    assert err and body["error"] == "unknown_tool"


def test_the_first_fact_hint_names_the_owners_own_page(vault):
    r = brain("status")
    assert "--entity people/sam-ortiz" in r.stdout, r.stdout
