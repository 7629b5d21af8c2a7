"""Every CLI flag fills a declared tool parameter, so renaming a parameter
breaks a test instead of silently disabling a flag; the human --since forms;
a no-op `brain index` leaves the model unloaded."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from brain.cli.verb_commands import COMMANDS, RECALL_LIMIT
from brain.cli.verb_main import parser_for, to_args
from brain.daemon.protocol import tools as td
from brain.daemon.protocol.params import normalize_and_validate
from brain.daemon.protocol.timeparse import parse_since_human


def _full_command_line(cmd) -> list[str]:
    argv = []
    for o in cmd.all_opts():
        if o.positional:
            argv.append("people/alice")
        elif o.kind == "flag":
            argv.append(o.names[0])
        else:
            choices = cmd.choices_of(o)
            argv += [o.names[0], choices[0] if choices else ("5" if o.kind == "int" else "x")]
    return argv


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if c.tool))
def test_every_flag_maps_to_a_declared_parameter(name):
    cmd = COMMANDS[name]
    tool = td.ALL_TOOLS[cmd.tool]
    declared = {p.name: p for p in tool.params}
    for o in cmd.all_opts():
        assert o.param is None or o.param in declared, (name, o.names, o.param)
    args = to_args(cmd, parser_for(cmd).parse_args(_full_command_line(cmd)))
    assert parser_for(cmd, with_help=True).parse_args(_full_command_line(cmd)) == \
        parser_for(cmd).parse_args(_full_command_line(cmd))
    # every flag given reached the call, under a declared key, with the declared type
    assert set(args) == {o.param for o in cmd.all_opts() if o.param}
    assert normalize_and_validate(tool, args) == args


def test_help_and_limits_come_from_the_tool_definitions():
    recall = COMMANDS["recall"]
    limit = td.RECALL.param("limit")
    assert f"1-{limit.maximum}" in recall.help_of(next(o for o in recall.opts if o.param == "limit"))
    assert recall.help_of(next(o for o in recall.opts if o.param == "grep")) == td.RECALL.param("grep").description
    assert COMMANDS["remember"].choices_of(next(o for o in COMMANDS["remember"].opts if o.param == "kind")) == \
        tuple(td.KINDS)
    from brain.daemon.verbs import recall as recall_verb

    assert (recall_verb.RECALL_LIMIT_DEFAULT, recall_verb.RECALL_LIMIT_MAX) == (limit.default, limit.maximum)
    assert RECALL_LIMIT < limit.default


def test_enum_params_are_the_enums_the_tools_declare():
    from brain.cli.verb_commands import ENUM_PARAMS

    enums = {p.name for c in COMMANDS.values() if c.tooldef for p in c.tooldef.params if p.enum
             if any(o.param == p.name for o in c.opts)}
    assert enums == ENUM_PARAMS


def test_remember_declares_the_session_id_it_reads(tmp_path):
    assert "session_id" in {p.name for p in td.REMEMBER.params}
    run = lambda *a: subprocess.run([sys.executable, "-m", "brain.cli.entry", *a], capture_output=True, text=True)
    assert run("init", str(tmp_path / "v"), "--no-daemon", "--create").returncode == 0
    assert run("remember", "Tea at four", "-p", "user", "--session", "s-1", "--no-daemon").returncode == 0
    r = run("recall", "--session", "s-1", "--no-daemon")
    assert "Tea at four" in r.stdout, r.stderr


NOW = dt.datetime(2026, 3, 31, 15, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("text,expected", [
    ("2 weeks ago", NOW - dt.timedelta(days=14)),
    ("3 days ago", NOW - dt.timedelta(days=3)),
    ("last week", NOW - dt.timedelta(days=7)),
    ("a week ago", NOW - dt.timedelta(days=7)),
    ("last 3 days", NOW - dt.timedelta(days=3)),
    ("last month", dt.datetime(2026, 2, 28, 15, 0, tzinfo=dt.timezone.utc)),  # clamped to February's end
    ("1 year ago", dt.datetime(2025, 3, 31, 15, 0, tzinfo=dt.timezone.utc)),
    ("8 hours ago", NOW - dt.timedelta(hours=8)),
    ("30m", NOW - dt.timedelta(minutes=30)),
    ("2026-06-12", dt.datetime(2026, 6, 12, tzinfo=dt.timezone.utc)),
    ("2026-06-12T09:30:00Z", dt.datetime(2026, 6, 12, 9, 30, tzinfo=dt.timezone.utc)),
])
def test_since_human_forms(text, expected):
    assert parse_since_human(text, NOW) == expected


def test_today_and_yesterday_are_local_midnights():
    today = parse_since_human("today", NOW)
    assert parse_since_human("yesterday", NOW) == today - dt.timedelta(days=1)
    local = today.astimezone()
    assert (local.hour, local.minute) == (0, 0) and local.date() == NOW.astimezone().date()


@pytest.mark.parametrize("text", ["yesterday-ish", "soon", "definitely not a date", "2 fortnights ago", ""])
def test_since_human_rejects_nonsense(text):
    assert parse_since_human(text, NOW) is None


def test_a_no_op_index_does_not_load_the_model(tmp_path, places):
    from brain.cli.index_cmd import _all_embedded, _index_in_foreground
    from brain.daemon import config as config_mod
    from brain.daemon.server.vault_engine import VaultEngine

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("---\ntitle: A\n---\nAlpha is a page about apples.\n")
    cfg = config_mod.load(places.config_file)
    engine = VaultEngine(vault, places, cfg, writer="index")
    try:
        first = _index_in_foreground(engine, quiet=True, vectors=True)
        assert first["embedded"] >= 1 and engine.models is not None
    finally:
        engine.close()
    engine = VaultEngine(vault, places, cfg, writer="index")
    try:
        again = _index_in_foreground(engine, quiet=True, vectors=True)
        assert again["embedded"] == 0 and again["vectors"] == first["vectors"]
        assert engine.models is None  # nothing to embed: the model was never loaded
        (vault / "b.md").write_text("---\ntitle: B\n---\nBeta is new.\n")
        engine.index.reconcile()
        assert _all_embedded(engine) is None  # a new chunk needs the model again
    finally:
        engine.close()
