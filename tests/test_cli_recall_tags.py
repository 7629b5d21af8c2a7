"""`brain recall --tag TAG` and `#tag` words: page hits kept to pages carrying the tag (cli/recall_tags.py),
while recall on the wire stays as every other client sees it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from brain.cli.recall_tags import split_query

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, NO_COLOR="1"))


@pytest.fixture
def vault(tmp_path):
    v = tmp_path / "notes"
    (v / "projects").mkdir(parents=True)
    for i in range(14):
        tag = ["finance", "finance/ledger", "ops"][i % 3]
        (v / "projects" / f"Billing part {i}.md").write_text(
            f"---\ntitle: Billing step {i}\ntags: [{tag}]\n---\nThe billing migration step {i} is planned carefully.\n")
    (v / "projects" / "Inline.md").write_text("# Inline\nThe billing migration, told inline. #finance\n")
    r = brain("init", str(v), "--no-daemon")
    assert r.returncode == 0, r.stderr
    return v


def _pages(*args) -> list[str]:
    r = brain("recall", *args, "--json", "--no-daemon")
    assert r.returncode == 0, r.stderr
    return [x["slug"] for x in json.loads(r.stdout)["results"]]


def test_tag_keeps_only_pages_carrying_it_nested_and_inline_tags_included(vault):
    everything = _pages("billing migration")
    assert any(s.endswith(("-2", "-5")) for s in everything)   # ops pages match without the filter
    finance = {f"projects/billing-part-{i}" for i in range(14) if i % 3 != 2} | {"projects/inline"}
    got = _pages("billing migration", "--tag", "finance", "--limit", "20")
    assert set(got) == finance
    # #tag words in the query do the same, and leave the other words as the query
    assert set(_pages("billing migration #finance", "--limit", "20")) == finance
    assert set(_pages("billing #Finance/Ledger", "--limit", "20")) == {
        f"projects/billing-part-{i}" for i in range(14) if i % 3 == 1}
    # the limit is what is shown after filtering
    assert len(_pages("billing migration", "--tag", "finance", "--limit", "3")) == 3
    # a tag alone is enough to ask with
    assert set(_pages("--tag", "ops", "--limit", "20")) == {f"projects/billing-part-{i}" for i in range(14)
                                                             if i % 3 == 2}


def test_the_wire_is_unchanged_and_remote_tags_are_refused_with_a_fix(vault):
    raw = json.loads(brain("call", "recall", '{"query": "billing migration #finance"}', "--no-daemon").stdout)
    assert any(r["slug"].endswith("-2") for r in raw["results"])   # other clients: no filtering
    r = brain("recall", "billing", "--tag", "finance", "--remote", "work")
    assert r.returncode == 2 and "remote" in r.stderr and "page index" in r.stderr


def test_tag_words_are_told_apart_from_issue_numbers():
    assert split_query("fix #12 in #Billing and #ops/oncall", "x, #y") == ("fix #12 in and", ["x", "y", "billing",
                                                                                                "ops/oncall"])
