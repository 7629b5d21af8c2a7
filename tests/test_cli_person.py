"""The terminal as a person meets it: result size, file paths, colour rules,
get/open, did-you-mean, --since forms, CLI-worded errors, closed pipes."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]
ESC = "\x1b["


def brain(*args, env=None, stdin=None):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, timeout=120, input=stdin,
                          env=dict(os.environ, **(env or {})))


@pytest.fixture
def vault(tmp_path):
    v = tmp_path / "notes"
    (v / "projects").mkdir(parents=True)
    (v / "people").mkdir()
    for i in range(14):
        (v / "projects" / f"Billing part {i}.md").write_text(
            f"---\ntitle: Billing step {i}\n---\nThe billing migration step {i} is planned carefully.\n")
    (v / "people" / "Canvas Lee.md").write_text("---\ntitle: Canvas Lee\naliases: [Canny]\n---\nDesigner.\n")
    r = brain("init", str(v), "--no-daemon")
    assert r.returncode == 0, r.stderr
    return v


def test_recall_shows_ten_results_as_file_paths_with_titles_and_passages(vault):
    r = brain("recall", "billing migration", "--no-daemon", env={"NO_COLOR": ""})
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("projects/Billing part ") == 10  # a person's default, not the protocol's 50
    assert f"{vault}/projects/Billing part 3.md:4  Billing step 3  (" in r.stdout  # a location a terminal opens
    assert "is planned carefully" in r.stdout
    assert ESC not in r.stdout  # a pipe gets no escapes
    body = json.loads(brain("call", "recall", '{"query": "billing migration"}', "--no-daemon").stdout)
    assert len(body["results"]) == 14  # MCP and `call` keep the protocol default


def test_colour_follows_force_color_and_no_color(vault):
    forced = brain("recall", "billing migration", "--no-daemon", env={"FORCE_COLOR": "1"})
    assert ESC in forced.stdout and "\x1b[1;33mbilling\x1b[0m" in forced.stdout  # query terms highlighted
    both = brain("recall", "billing migration", "--no-daemon", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESC not in both.stdout and "billing" in both.stdout
    as_json = brain("recall", "billing migration", "--json", "--no-daemon", env={"FORCE_COLOR": "1"})
    assert ESC not in as_json.stdout


def test_facts_show_their_date(vault):
    brain("remember", "Ana leads billing", "-p", "user", "-e", "people/canvas-lee", "--no-daemon")
    r = brain("recall", "--entity", "people/canvas-lee", "--no-daemon")
    # a fact id is minted per device (docs/architecture.md, "Fact ids"): any number, shown after "#"
    assert re.search(r"#\d+ \[people/canvas-lee\]  Ana leads billing  \(today \d\d:\d\d, from user\)", r.stdout), r.stdout


def test_get_prints_a_page_by_slug_or_path(vault):
    for name in ("people/canvas-lee", "people/Canvas Lee.md", str(vault / "people" / "Canvas Lee.md")):
        r = brain("get", name, "--no-daemon")
        assert r.returncode == 0 and r.stdout.startswith("---\ntitle: Canvas Lee"), (name, r.stderr)
    r = brain("get", "people/canvas-le", "--no-daemon")
    assert r.returncode == 1 and "did you mean people/canvas-lee" in r.stderr


def test_get_takes_a_title_only_one_page_has(vault):
    brain("index", "-q", "--keyword-only")
    r = brain("get", "canvas LEE", "--no-daemon")
    assert r.returncode == 0 and r.stdout.startswith("---\ntitle: Canvas Lee"), r.stderr
    (vault / "people" / "Other Canvas.md").write_text("---\ntitle: Canvas Lee\n---\nSomeone else.\n")
    brain("index", "-q", "--keyword-only")
    # two pages have it: not "no such page", but both, and how to name one; get and open alike
    ambiguous = ("error: 'Canvas Lee' is the title or alias of 2 pages:\n"
                 "  people/canvas-lee  (people/Canvas Lee.md)\n"
                 "  people/other-canvas  (people/Other Canvas.md)\n"
                 "fix: name one by its slug or file path, e.g. `brain get people/canvas-lee`\n")
    r = brain("get", "Canvas Lee", "--no-daemon")
    assert r.returncode == 1 and r.stderr == ambiguous and r.stdout == ""
    r = brain("open", "canvas lee", env={"VISUAL": "", "EDITOR": ""})
    assert r.returncode == 1 and r.stderr == ambiguous.replace("'Canvas Lee'", "'canvas lee'")


def _recorder(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "argv.json"
    script = tmp_path / "record"
    script.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(log)!r}, 'w'))\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def test_open_uses_the_editor_or_prints_the_path(vault, tmp_path):
    brain("index", "-q", "--keyword-only")
    editor, log = _recorder(tmp_path)
    r = brain("open", "people/canvas-lee", env={"EDITOR": f"{editor} --wait", "VISUAL": ""})
    assert r.returncode == 0, r.stderr
    assert json.loads(log.read_text()) == ["--wait", str(vault / "people" / "Canvas Lee.md")]
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL")}
    r = subprocess.run([*BRAIN, "open", "people/Canvas Lee.md"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == str(vault / "people" / "Canvas Lee.md")


def test_open_in_an_obsidian_vault_hands_obsidian_its_uri(vault, tmp_path):
    (vault / ".obsidian").mkdir()
    brain("index", "-q", "--keyword-only")
    opener, log = _recorder(tmp_path)
    r = brain("open", "people/canvas-lee", env={"BRAIN_OPENER": str(opener), "EDITOR": "false"})
    assert r.returncode == 0, r.stderr
    assert json.loads(log.read_text()) == ["obsidian://open?vault=notes&file=people%2FCanvas%20Lee"]


def test_did_you_mean_for_flags_commands_and_entities(vault):
    r = brain("recall", "x", "--limt", "3", "--no-daemon")
    assert r.returncode == 2 and "did you mean --limit?" in r.stderr and "Traceback" not in r.stderr
    r = brain("recal", "x")
    assert r.returncode == 2 and "did you mean `brain recall`?" in r.stderr
    brain("index", "-q", "--keyword-only")
    r = brain("entity", "canvs lee", "--no-daemon")
    assert r.returncode == 1 and "people/canvas-lee" in r.stdout and "did you mean" in r.stdout


def test_an_entity_miss_suggests_names_not_pages_that_merely_mention_the_words(vault):
    (vault / "companies").mkdir()
    (vault / "companies" / "Acme.md").write_text("---\ntitle: Acme\n---\n## People\nMe and the people of Acme.\n")
    brain("index", "-q", "--keyword-only")
    body = json.loads(brain("call", "entity", '{"name": "people/me"}', "--no-daemon").stdout)
    assert "companies/acme" in [s["slug"] for s in body["suggestions"]]  # the search's near miss, for agents
    r = brain("entity", "people/me", "--no-daemon")
    assert r.returncode == 1 and "no such entity 'people/me'" in r.stdout
    assert "companies/acme" not in r.stdout  # a person is shown names like the one typed
    assert "did you mean" not in r.stdout  # and "me" is too short to be a misspelling of anything
    r = brain("entity", "people/canvs-lee", "--no-daemon")
    assert "people/canvas-lee" in r.stdout  # the folder does not count against a near name


@pytest.mark.parametrize("since", ["yesterday", "today", "last week", "last month", "2 weeks ago", "3 days ago",
                                   "2026-06-12", "2026-06-12T09:30:00Z", "8 hours ago"])
def test_since_accepts_what_people_type(vault, since):
    r = brain("recall", "--since", since, "--no-daemon")
    assert r.returncode == 0, (since, r.stderr)


def test_errors_name_flags_not_wire_keys(vault):
    from brain.cli.verb_commands import COMMANDS
    from brain.cli.render import speak_cli
    from brain.daemon.protocol.errors import GENERIC_PARAM_SUGGESTION

    recall = COMMANDS["recall"]
    assert speak_cli('Parameter "include_expired" must be a boolean', recall) == \
        "Parameter --include-expired must be a boolean"
    assert speak_cli("budget_tokens must be positive", recall) == "--budget must be positive"
    forget = subprocess.run([*BRAIN, "forget", "abc", "--no-daemon"], capture_output=True, text=True)
    assert forget.returncode == 1 and "fact_id" not in forget.stderr and "brain recall" in forget.stderr
    assert "include_expired" not in forget.stderr and "recall with --include-expired" in forget.stderr
    assert "from recall" not in forget.stderr and "a number as a string" not in forget.stderr
    assert GENERIC_PARAM_SUGGESTION not in forget.stderr


def test_a_closed_pipe_ends_quietly(vault):
    (vault / "big.md").write_text("---\ntitle: Big\n---\n" + "word " * 60000 + "\n")
    for argv in (["get", "big", "--json", "--no-daemon"], ["get", "big", "--no-daemon"], ["config", "list"]):
        p = subprocess.Popen([*BRAIN, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        p.wait(timeout=60)
        assert "Traceback" not in err and "BrokenPipe" not in err, (argv, err)


def test_shell_completion_knows_the_lean_commands_and_their_options():
    def complete(words: str, cword: int) -> list[str]:
        r = brain(env={"_BRAIN_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
        return r.stdout.split()

    assert "--limit" in complete("brain recall --li", 2)
    assert "recall" in complete("brain rec", 1)
    assert "--surface" in complete("brain serve --su", 2)
    r = brain("--show-completion", "bash")
    assert r.returncode == 0 and "_brain_completion" in r.stdout


def test_open_never_reaches_a_file_outside_the_vault(vault, tmp_path):
    # before the index knows a page, a path is looked up on disk: only inside the vault
    (tmp_path / "outside.md").write_text("# not a note of this vault\n")
    (vault / "escape").symlink_to(tmp_path)
    (vault / ".brain").mkdir(exist_ok=True)
    (vault / ".brain" / "x.md").write_text("# private to brain\n")
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL")}
    for name in ("../outside.md", "escape/outside.md", str(tmp_path / "outside.md"), ".brain/x.md"):
        r = subprocess.run([*BRAIN, "open", name], capture_output=True, text=True, env=env)
        assert r.returncode != 0 and "outside.md" not in r.stdout and "x.md" not in r.stdout, (name, r.stdout)
