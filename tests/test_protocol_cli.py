"""`brain protocol stats` and the protocol command group's edges."""

import json
import subprocess
import sys

from conftest import call


def brain(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "brain.cli.entry", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_stats_aggregates_real_verb_calls(engine, remote):
    for i in range(3):
        call(engine, "remember", {"fact": f"fact number {i}", "provenance": "test"}, remote)
    call(engine, "remember", {"fact": "no provenance"}, remote)  # a validation failure is a call too
    call(engine, "recall", {}, remote)
    proc = brain("protocol", "stats", "--json", "--days", "not-a-number")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["days"] == 30  # an unparseable window falls back to the default
    assert "--days" in proc.stderr and "30 days" in proc.stderr  # …and says so, off the JSON stream
    assert doc["total_calls"] == 5
    assert doc["by_verb"]["remember"]["calls"] == 4 and doc["by_verb"]["remember"]["errors"] == 1
    text = brain("protocol", "stats").stdout
    assert "remember" in text and "recall" in text


def test_stats_says_so_when_the_stats_module_is_missing(monkeypatch):
    from typer.testing import CliRunner

    from brain.cli.app import app

    monkeypatch.setitem(sys.modules, "brain.daemon.server.usage_stats", None)
    result = CliRunner().invoke(app, ["protocol", "stats"])
    assert result.exit_code == 1
    assert "usage statistics are not part of this build" in result.output


def test_unknown_protocol_subcommand_is_an_error():
    proc = brain("protocol", "nope")
    assert proc.returncode != 0
    assert "No such command" in proc.stderr


def test_an_empty_target_is_refused_with_a_fix():
    proc = brain("protocol", "conformance", "--target", "   ")
    assert proc.returncode == 2
    assert "error: --target is empty." in proc.stderr and "fix:" in proc.stderr
