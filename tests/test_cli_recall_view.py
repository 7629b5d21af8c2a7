"""`brain recall` as a person and a script read it: each page as `path:line  Title
(label)` with the README's words for its evidence, `--scores`, `--files` and `--md`.
Golden text (run from inside the vault, so locations are relative to it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]

LEDGER = """---
title: Ledger v2
aliases: [new ledger]
---
# Ledger v2

The rebuild of the payments ledger.

## Cut-over
Robin writes the cut-over runbook in December.
"""

NOTES = """# Weekly notes

Talked about the ledger cut-over weekend and who is on call.
"""


def brain(*args, cwd):
    r = subprocess.run([*BRAIN, *args, "--no-daemon"], capture_output=True, text=True, timeout=120, cwd=str(cwd),
                       env=dict(os.environ, NO_COLOR="1", COLUMNS="100"))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def vault(tmp_path):
    v = tmp_path / "notes"
    (v / "projects").mkdir(parents=True)
    (v / "projects" / "ledger.md").write_text(LEDGER)
    (v / "weekly.md").write_text(NOTES)
    subprocess.run([*BRAIN, "init", str(v), "--no-daemon"], capture_output=True, timeout=120, check=True)
    return v


def test_pages_show_location_title_and_the_readme_label(vault):
    out = brain("recall", "new ledger", cwd=vault)
    assert out.splitlines()[2] == "projects/ledger.md:7  Ledger v2  (alias match)"  # its opening passage
    out = brain("recall", "cut-over runbook", cwd=vault)
    assert "projects/ledger.md:10  Ledger v2  (" in out  # the line the passage starts on
    labels = {"alias match", "title match", "close in meaning", "keyword match", "weak match"}
    shown = [line.rsplit("(", 1)[1].rstrip(")") for line in out.splitlines() if ".md:" in line]
    assert shown and set(shown) <= labels


def test_scores_files_and_markdown(vault):
    out = brain("recall", "cut-over", "--scores", cwd=vault)
    heads = [line for line in out.splitlines() if ".md:" in line]
    assert heads[0].endswith(", score 1.00)") and all(", score " in h for h in heads)
    assert brain("recall", "cut-over", "--files", cwd=vault) == "projects/ledger.md\nweekly.md\n"
    assert brain("recall", "cut-over", "--md", cwd=vault) == (
        "## Pages matching “cut-over”\n"
        "\n"
        "- **Ledger v2** — `projects/ledger.md:10` (keyword match)\n"
        "  > Robin writes the cut-over runbook in December.\n"
        "\n"
        "- **Weekly notes** — `weekly.md:3` (weak match)\n"
        "  > Talked about the ledger cut-over weekend and who is on call.\n")


def test_from_outside_the_vault_locations_are_absolute(vault, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = brain("recall", "cut-over", "--files", cwd=elsewhere)
    assert out.splitlines()[0] == str(vault / "projects" / "ledger.md")


def test_files_null_separated_keep_names_with_spaces_whole(vault, tmp_path):
    (vault / "weekly.md").rename(vault / "Weekly Notes.md")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = brain("recall", "cut-over", "--files", "-0", cwd=elsewhere)
    assert out == f"{vault / 'projects' / 'ledger.md'}\0{vault / 'Weekly Notes.md'}\0"
    assert brain("recall", "cut-over", "--files", "--null", cwd=vault) == "projects/ledger.md\0Weekly Notes.md\0"
    # what a script does with it: every file opens, the one with spaces too
    xargs = subprocess.run(f"{' '.join(BRAIN)} recall cut-over --files -0 --no-daemon | xargs -0 wc -l",
                           shell=True, capture_output=True, text=True, timeout=120, cwd=str(elsewhere))
    assert xargs.returncode == 0 and "Weekly Notes.md" in xargs.stdout and "No such file" not in xargs.stderr


def test_json_results_carry_vault_path_and_line_but_the_wire_does_not(vault):
    import json

    body = json.loads(brain("recall", "cut-over", "--json", cwd=vault))
    where = {r["slug"]: (r["path"], r["line"]) for r in body["results"]}
    assert sorted(where.values()) == [("projects/ledger.md", 10), ("weekly.md", 3)], where
    wire = json.loads(brain("call", "recall", '{"query": "cut-over"}', cwd=vault))
    assert wire["results"] and all("path" not in r and "line" not in r for r in wire["results"])


PLANNING = """# Planning

Some opening prose about the quarter, long enough that the passage is a slice of the page and not all
of it, with nothing in it about the systems below; it only sets the scene for the rest of the note.

The order we agreed:
- move the settlement ledger first
- then the invoicing service
- finally the quarterly reports

| system | owner | switch-over |
|---|---|---|
| settlement ledger | Tom | March |
| invoicing | Mei | April |

> [!warning] Risk
> The settlement switch-over slips if the partner bank file is late.
"""


def test_passages_keep_list_items_table_rows_and_callouts_on_their_own_lines(vault):
    (vault / "planning.md").write_text(PLANNING)
    out = brain("recall", "invoicing service", cwd=vault)
    assert "    - move the settlement ledger first\n    - then the invoicing service\n" in out, out
    out = brain("recall", "owner switch-over April", cwd=vault)
    assert "    | system | owner | switch-over |\n    |---|---|---|\n    | settlement ledger | Tom | March |\n" in out, out
    out = brain("recall", "partner bank file late", cwd=vault)
    assert "    > [!warning] Risk\n    > The settlement switch-over slips" in out, out
