"""`brain entity` as a person reads it: an entity known only from facts shows its facts
under the name as typed; a page-backed card shows its facts too. Golden text, with the
clock's part of each fact's date masked."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from brain.daemon.protocol.shapes import RESPONSE_SCHEMAS, validate
from conftest import call

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args):
    r = subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NO_COLOR="1"))
    assert r.returncode == 0, r.stderr
    # a device mints ids in its own slot (docs/architecture.md, "Fact ids"): the id is masked, the order kept
    out = re.sub(r"#\d+ +", "#ID ", r.stdout)
    return re.sub(r"\(today \d\d:\d\d", "(today HH:MM", re.sub(r", \d+ ms$", ", N ms", out, flags=re.M))


@pytest.fixture
def notes(tmp_path):
    v = tmp_path / "notes"
    (v / "people").mkdir(parents=True)
    (v / "people" / "priya-raman.md").write_text(
        "---\ntitle: Priya Raman\naliases: [Priya]\ntype: person\n---\n# Priya Raman\n\nEngineering manager.\n")
    assert subprocess.run([*BRAIN, "init", str(v), "--no-daemon"], capture_output=True, timeout=120).returncode == 0
    for fact, entity in (("Lisa leads the payments audit in January", "Lisa"),
                         ("Lisa prefers written agendas", "Lisa"),
                         ("Priya prefers async reviews", "people/priya-raman")):
        brain("remember", fact, "--provenance", "me", "--entity", entity, "--no-daemon")
    return v


def test_an_entity_known_only_from_facts_shows_them_under_the_name_as_typed(notes):
    assert brain("entity", "Lisa", "--no-daemon") == (
        "Lisa  (lisa)\n"
        "  No page yet.\n"
        "  facts (2):\n"
        "    #ID Lisa prefers written agendas  (today HH:MM, from me)\n"
        "    #ID Lisa leads the payments audit in January  (today HH:MM, from me)\n"
        "  0 backlinks, 2 active facts, N ms\n")


def test_a_page_backed_card_shows_its_facts(notes):
    assert brain("entity", "Priya", "--no-daemon") == (
        "Priya Raman  (people/priya-raman, person)\n"
        "  aka: Priya\n"
        "  Engineering manager.\n"
        "  facts (1):\n"
        "    #ID Priya prefers async reviews  (today HH:MM, from me)\n"
        "  0 backlinks, 1 active facts, N ms\n")


def test_the_mcp_card_of_a_facts_only_entity_keeps_its_shape(engine, local, remote):
    body, err = call(engine, "remember", {"fact": "Lisa prefers tea", "provenance": "t", "entity": "Lisa"}, local)
    assert not err, body
    body, err = call(engine, "entity", {"name": "Lisa"}, remote)
    assert not err and validate(body, RESPONSE_SCHEMAS["entity"]) == []
    assert body["card"]["entity"] == {"slug": "lisa", "title": "Lisa", "type": None}
    assert "prefers tea" not in body["card"]["summary"]  # the card counts facts, never quotes them
