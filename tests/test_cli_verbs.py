"""The `brain` command as a person types it (real subprocesses, in-process engine)."""

import json
import os
import subprocess
import sys
from pathlib import Path

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args, env=None, check=False):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, check=check, timeout=120)


def test_quickstart_round_trip(tmp_path, brain_home):
    vault = tmp_path / "notes"
    out = brain("init", str(vault))
    assert out.returncode == 0, out.stderr
    assert (vault / ".brain").is_dir() and str(vault) in out.stdout
    r = brain("remember", "I prefer dark mode in every editor", "--provenance", "demo",
              "--entity", "people/me", "--no-daemon")
    assert r.returncode == 0 and "remembered as fact #1" in r.stdout, r.stderr
    r = brain("recall", "--entity", "people/me", "--no-daemon")
    assert r.returncode == 0 and "I prefer dark mode in every editor" in r.stdout and "demo" in r.stdout
    r = brain("recall", "--entity", "people/me", "--json", "--no-daemon")
    body = json.loads(r.stdout)
    assert body["facts"][0]["fact_id"] == "1" and body["protocol_version"] == 1


def test_protocol_error_goes_to_stderr_with_fix_and_nonzero_exit(tmp_path):
    brain("init", str(tmp_path / "v"), check=True)
    r = brain("remember", "x", "--provenance", " ", "--no-daemon")
    assert r.returncode == 1 and r.stdout == ""
    assert "provenance_required" in r.stderr and "fix:" in r.stderr
    r = brain("remember", "x", "--provenance", "p", "--ttl", "P30D", "--no-daemon")
    assert r.returncode == 1 and '"30d"' in r.stderr


def test_call_prints_the_raw_envelope(tmp_path):
    brain("init", str(tmp_path / "v"), check=True)
    r = brain("call", "forget", '{"id": "people/alice"}', "--no-daemon")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"] == "not_found"
    r = brain("call", "recall", "{not json", "--no-daemon")
    assert r.returncode == 2 and "not JSON" in r.stderr


def test_no_vault_says_how_to_make_one():
    r = brain("recall", "--no-daemon")
    assert r.returncode == 1 and "brain init" in r.stderr


def test_brain_vault_env_overrides_config(tmp_path):
    brain("init", str(tmp_path / "a"), check=True)
    env = dict(os.environ, BRAIN_VAULT=str(tmp_path / "b"))
    (tmp_path / "b").mkdir()
    brain("remember", "only in b", "--provenance", "t", "--no-daemon", env=env, check=True)
    assert (tmp_path / "b" / ".brain" / "facts.jsonl").exists()
    assert not (tmp_path / "a" / ".brain" / "facts.jsonl").exists()


def test_config_set_rejects_unknown_keys(tmp_path):
    r = brain("config", "set", "nonsense.key", "1")
    assert r.returncode == 1 and "unknown setting" in r.stderr
    r = brain("config", "set", "mcp_surface", "verbs")
    assert r.returncode == 0
    assert brain("config", "get", "mcp_surface").stdout.strip() == "verbs"
