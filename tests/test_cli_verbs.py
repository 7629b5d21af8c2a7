"""The `brain` command as a person types it (real subprocesses, in-process engine)."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(*args, env=None, check=False):
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, check=check, timeout=120)


def test_quickstart_round_trip(tmp_path, brain_home):
    vault = tmp_path / "notes"
    out = brain("init", str(vault), "--no-daemon", "--create")
    assert out.returncode == 0, out.stderr
    assert (vault / ".brain").is_dir() and str(vault) in out.stdout
    r = brain("remember", "I prefer dark mode in every editor", "--provenance", "demo",
              "--entity", "people/me", "--no-daemon")
    from brain.daemon.facts.sources import slot_of

    assert r.returncode == 0 and "remembered as fact #" in r.stdout, r.stderr
    fid = re.search(r"remembered as fact #(\d+)", r.stdout).group(1)
    device, = (Path(brain_home) / "state" / "vaults").glob("*/device")
    assert int(fid) == (1 << 20) + slot_of(device.read_text().strip())  # this device's first id
    r = brain("recall", "--entity", "people/me", "--no-daemon")
    assert r.returncode == 0 and "I prefer dark mode in every editor" in r.stdout and "demo" in r.stdout
    r = brain("recall", "--entity", "people/me", "--json", "--no-daemon")
    body = json.loads(r.stdout)
    assert body["facts"][0]["fact_id"] == fid and body["protocol_version"] == 1


def test_protocol_error_goes_to_stderr_with_fix_and_nonzero_exit(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    r = brain("remember", "x", "--provenance", " ", "--no-daemon")
    assert r.returncode == 1 and r.stdout == ""
    # in the words of the command line: the flag, not the wire's error code
    assert "--provenance is blank" in r.stderr and "fix:" in r.stderr and "provenance_required" not in r.stderr
    r = brain("remember", "x", "--provenance", "p", "--ttl", "P30D", "--no-daemon")
    assert r.returncode == 1 and '"30d"' in r.stderr


def test_call_prints_the_raw_envelope(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    r = brain("call", "forget", '{"id": "people/alice"}', "--no-daemon")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"] == "not_found"
    r = brain("call", "recall", "{not json", "--no-daemon")
    assert r.returncode == 2 and "not JSON" in r.stderr


def test_no_vault_says_how_to_make_one():
    r = brain("recall", "--no-daemon")
    assert r.returncode == 1 and "brain init" in r.stderr


def test_brain_vault_env_overrides_config(tmp_path):
    brain("init", str(tmp_path / "a"), "--no-daemon", "--create", check=True)
    env = dict(os.environ, BRAIN_VAULT=str(tmp_path / "b"))
    (tmp_path / "b").mkdir()
    brain("remember", "only in b", "--provenance", "t", "--no-daemon", env=env, check=True)
    from conftest import facts_logs

    assert facts_logs(tmp_path / "b")
    assert not facts_logs(tmp_path / "a")


def test_config_set_rejects_unknown_keys(tmp_path):
    r = brain("config", "set", "nonsense.key", "1")
    assert r.returncode == 1 and "unknown setting" in r.stderr
    r = brain("config", "set", "mcp_surface", "verbs")
    assert r.returncode == 0
    assert brain("config", "get", "mcp_surface").stdout.strip() == "verbs"


def test_config_set_checks_values_and_names_the_fix():
    for key, value, says in [("hooks.budget_tokens", "abc", "whole number"),
                             ("hooks.budget_tokens", "-5", "whole number"),  # a value, not an unknown option
                             ("hooks.budget_tokens", "0", "from 1"),
                             ("mcp_surface", "bogus", "verbs, starter, full"),
                             ("llm.provider", "openia", "anthropic, openai"),
                             ("http.port", "99999", "65535"),
                             ("llm.base_url", "localhost:11434", "http://"),
                             ("vault", "/nonexistent/notes", "not a folder"),
                             ("protocol_installed_at", "last tuesday", "ISO 8601")]:
        r = brain("config", "set", key, value)
        assert r.returncode == 1, (key, value, r.stdout)
        assert says in r.stderr and "fix:" in r.stderr and "Traceback" not in r.stderr, (key, value, r.stderr)
    assert brain("config", "get", "hooks.budget_tokens").stdout.strip() == "1500"  # nothing bad was written


def test_config_unset_restores_the_default():
    assert brain("config", "set", "hooks.budget_tokens", "800").returncode == 0
    assert brain("config", "get", "hooks.budget_tokens").stdout.strip() == "800"
    r = brain("config", "unset", "hooks.budget_tokens")
    assert r.returncode == 0 and "1500" in r.stdout
    assert brain("config", "get", "hooks.budget_tokens").stdout.strip() == "1500"
    assert brain("config", "unset", "no.such.key").returncode == 1


def test_a_broken_config_file_is_an_error_with_a_fix_not_a_traceback(tmp_path, brain_home):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    config_file = next(brain_home.rglob("config.toml"))
    config_file.write_text("vault = [broken\n")
    for argv in (["status"], ["config", "list"], ["doctor"], ["recall", "--no-daemon"]):
        r = brain(*argv)
        assert r.returncode == 1, argv
        assert "Traceback" not in r.stderr and str(config_file) in r.stderr and "fix:" in r.stderr, (argv, r.stderr)


def test_an_unforeseen_failure_prints_an_error_and_a_fix(tmp_path):
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    r = brain("status", env=dict(os.environ, BRAIN_VAULT=str(afile)))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and "error:" in r.stderr and "fix:" in r.stderr


def test_verb_help_lists_every_option_the_parser_takes():
    from brain.cli.verb_commands import COMMANDS
    from brain.cli.verb_main import parser_for

    for verb, cmd in COMMANDS.items():
        sp = parser_for(cmd)
        text = brain(verb, "--help").stdout
        assert f"Usage: brain {verb}" in text
        for action in sp._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in text, (verb, flag)


def test_recall_with_a_query_labels_facts_and_pages(tmp_path):
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "billing.md").write_text("---\ntitle: Billing\n---\nThe billing migration is led by Ana.\n")
    brain("init", str(vault), "--no-daemon", check=True)
    brain("remember", "I like tea", "--provenance", "t", "--no-daemon", check=True)
    brain("remember", "Ana leads the billing migration", "--provenance", "t", "--no-daemon", check=True)
    r = brain("recall", "billing migration", "--no-daemon")
    assert r.returncode == 0, r.stderr
    # facts are ranked by the query: the one about tea does not match it
    assert re.search(r"facts[^\n]*\(1\)", r.stdout) and "Ana leads the billing migration" in r.stdout
    assert "tea" not in r.stdout
    assert "pages (1)" in r.stdout and "billing.md:4  Billing  (keyword match)" in r.stdout


def test_doctor_names_its_areas_and_an_unknown_one_gets_a_fix(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    r = brain("doctor", "nope")
    assert r.returncode == 2 and "fix:" in r.stderr and "model" in r.stderr
    brain("config", "set", "embeddings.enabled", "false", check=True)
    r = brain("doctor", "model")
    assert r.returncode == 0 and "keyword search only" in r.stdout


def _tree(folder: Path) -> dict:
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def test_demo_runs_the_readme_round_trip_in_process_and_leaves_the_folder_as_it_was(sample_vault):
    before = _tree(sample_vault)
    for _ in range(2):  # a second run starts from the same empty facts log
        r = brain("demo", str(sample_vault), "--no-daemon")
        assert r.returncode == 0, r.stderr
        assert "indexed " in r.stdout and "indexed 0 pages" not in r.stdout  # the folder was indexed first
        for shown in ("remembered as fact #", "I prefer dark mode in every editor", "pages (",
                      "Priya", "## Hot memory", "projects/billing-retirement.md"):
            assert shown in r.stdout, shown
    assert _tree(sample_vault) == before and not (sample_vault / ".brain").exists()
    # the closing hint registers a command an MCP host can start without this shell's PATH
    hint = r.stdout.split("claude mcp add --scope user brain -- ", 1)[1].split(" serve --surface starter", 1)[0]
    assert Path(shlex.split(hint)[0]).is_absolute(), hint


def test_entity_miss_and_a_new_delta_session_explain_themselves(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    r = brain("entity", "Nobody Known", "--no-daemon")
    assert r.returncode == 1 and "no such entity" in r.stdout and "brain recall" in r.stdout
    r = brain("delta", "--session", "s1", "--no-daemon")
    assert r.returncode == 0 and "first run of a new --session" in r.stdout


def test_cli_refuses_inputs_the_verb_would_silently_ignore(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    r = brain("recall", "--since", "garbage", "--no-daemon")
    assert r.returncode == 2 and "2 weeks ago" in r.stderr and r.stdout == ""
    r = brain("recall", "--budget", "-1", "--no-daemon")
    assert r.returncode == 2 and "positive number of tokens" in r.stderr
    r = brain("call", "recall", "[1]", "--no-daemon")
    assert r.returncode == 2 and "one JSON object" in r.stderr
    assert brain("recall", "--since", "8 hours ago", "--no-daemon").returncode == 0


def test_status_never_creates_a_missing_vault(tmp_path):
    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    missing = tmp_path / "typo"
    r = brain("status", env=dict(os.environ, BRAIN_VAULT=str(missing)))
    assert r.returncode == 1 and "not a folder" in r.stderr and "brain init" in r.stderr
    assert not missing.exists()


def test_config_writes_keep_comments_and_escape_every_character(tmp_path):
    import tomllib

    from brain.daemon import config as config_mod

    path = tmp_path / "config.toml"
    path.write_text('# my notes live here\nvault = "/tmp/v"  # moved in May\n\n[llm]\n# local model\nprovider = "openai"\n')
    cfg = config_mod.load(path)
    cfg["llm.model"] = "odd\r\x1bname\"\\"
    cfg["hooks.standing_entities"] = ["people/me", "projects/x"]
    del cfg["vault"]
    config_mod.save(path, cfg)
    text = path.read_text()
    assert "# my notes live here" in text and "# local model" in text
    assert "vault" not in tomllib.loads(text)
    assert config_mod.load(path) == {"llm.provider": "openai", "llm.model": "odd\r\x1bname\"\\",
                                     "hooks.standing_entities": ["people/me", "projects/x"]}
    config_mod.save(path, {})
    assert tomllib.loads(path.read_text()) == {}


def test_remember_at_the_terminal_defaults_provenance_to_the_user_but_mcp_still_must_give_it(tmp_path):
    from conftest import facts_log_lines

    brain("init", str(tmp_path / "v"), "--no-daemon", "--create", check=True)
    env = dict(os.environ, USER="mei", LOGNAME="mei")
    r = brain("remember", "Mei is out Friday", "--no-daemon", env=env)
    assert r.returncode == 0 and "remembered as fact" in r.stdout, r.stderr
    saved = [json.loads(line) for line in facts_log_lines(tmp_path / "v")]
    assert [f.get("source") for f in saved if f.get("fact") == "Mei is out Friday"] == ["cli:mei"], saved
    r = brain("call", "remember", '{"fact": "no source given"}', "--no-daemon")
    assert r.returncode == 1 and "Missing required parameter: provenance" in r.stdout, r.stdout


def test_entity_exits_1_when_nothing_is_found_and_0_when_found(tmp_path):
    v = tmp_path / "v"
    v.mkdir()
    (v / "billing.md").write_text("---\ntitle: Billing\n---\nThe billing migration.\n")
    brain("init", str(v), "--no-daemon", check=True)
    found = brain("entity", "Billing", "--no-daemon")
    assert found.returncode == 0 and "Billing" in found.stdout, found.stderr
    for extra in ((), ("--json",)):
        r = brain("entity", "Nobody Here", "--no-daemon", *extra)
        assert r.returncode == 1 and r.stdout.strip(), (extra, r.stdout, r.stderr)
    assert json.loads(brain("entity", "Billing", "--no-daemon", "--json").stdout)["found"] is True
