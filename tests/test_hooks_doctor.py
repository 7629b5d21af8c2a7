"""`brain doctor hooks` proves the chain: config present, command on PATH, and
a simulated SessionStart that yields context."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hooks_fixtures import VENV_BIN, brain, env_for, seed_home


@pytest.fixture
def setup(tmp_path, brain_home):
    seed_home(brain_home, deadline_ms=30000)
    home = tmp_path / "home"
    home.mkdir()
    env = env_for(brain_home, HOME=str(home), PATH=VENV_BIN + os.pathsep + "/usr/bin:/bin")
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        env.pop(k, None)
    yield home, env
    brain(env, "daemon", "stop")


def rows(env, cwd=None) -> tuple[int, list[dict]]:
    import subprocess

    from hooks_fixtures import BRAIN

    r = subprocess.run([*BRAIN, "doctor", "hooks", "--json"], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120)
    return r.returncode, json.loads(r.stdout)


def by_check(found: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in found:
        assert row["area"] == "hooks"
        out.setdefault(row["check"], []).append(row)
    return out


def test_doctor_proves_the_chain_end_to_end(setup):
    home, env = setup
    assert brain(env, "hooks", "install", "claude").returncode == 0
    assert brain(env, "hooks", "install", "codex").returncode == 0
    code, found = rows(env, cwd=home)
    checks = by_check(found)
    assert [r["status"] for r in checks["hook config"]] == ["ok", "ok"]
    assert "codex feature flag" not in checks  # the install turned it on
    # two harnesses run the same brain: its check is printed once, on the absolute path installed
    [command] = checks["hook command"]
    assert command["status"] == "ok" and command["detail"].startswith(str(Path(VENV_BIN) / "brain")), command
    [sim] = checks["simulated session start"]
    assert sim["status"] in ("ok", "warn") and "characters of context" in sim["detail"], sim
    assert code == 0


def test_doctor_without_hooks_warns_and_a_missing_command_fails(setup):
    home, env = setup
    code, found = rows(env, cwd=home)
    checks = by_check(found)
    assert checks["hook config"][0]["status"] == "warn" and "brain hooks install" in checks["hook config"][0]["detail"]
    assert checks["simulated session start"][0]["status"] in ("ok", "warn")  # runs this installation's hook

    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "/nowhere/bin/brain hook session-start", "timeout": 5}]}]}}))
    code, found = rows(env, cwd=home)
    checks = by_check(found)
    assert checks["hook command"][0]["status"] == "fail" and "/nowhere/bin/brain" in checks["hook command"][0]["detail"]
    assert code == 1


def test_doctor_reports_a_hook_that_yields_nothing(setup, brain_home):
    home, env = setup
    env = dict(env, BRAIN_VAULT=str(brain_home / "no-such-vault"))
    assert brain(env, "hooks", "install", "claude").returncode == 0
    code, found = rows(env, cwd=home)
    [sim] = by_check(found)["simulated session start"]
    assert sim["status"] == "fail" and "no context was injected" in sim["detail"], sim
    assert "is not a folder" in sim["detail"]  # the reason, from the hook log
    assert code == 1


def test_doctor_passes_on_a_vault_with_nothing_about_the_standing_entities(tmp_path, brain_home):
    """An ordinary new vault: no people/me page, no facts. The hook works; it has nothing to say yet."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "groceries.md").write_text("# Groceries\n\nOat milk and rye bread.\n")
    home = tmp_path / "home"
    home.mkdir()
    env = env_for(brain_home, HOME=str(home), PATH=VENV_BIN + os.pathsep + "/usr/bin:/bin")
    assert brain(env, "init", str(vault), "--no-daemon").returncode == 0
    assert brain(env, "config", "set", "embeddings.enabled", "false").returncode == 0
    # a loaded machine may start the daemon slower than the default deadline (as seed_home allows)
    assert brain(env, "config", "set", "hooks.deadline_ms", "30000").returncode == 0
    try:
        code, found = rows(env, cwd=home)
    finally:
        brain(env, "daemon", "stop")
    [sim] = by_check(found)["simulated session start"]
    assert sim["status"] == "ok" and "nothing to inject yet" in sim["detail"] and "people/me" in sim["detail"], sim
    assert "brain remember" in sim["detail"]  # the way to give it something
    assert code == 0 and not [r for r in found if r["status"] == "fail"]


def test_a_bare_brain_in_a_hook_config_is_a_warning_naming_the_fix(setup):
    """`brain` on this shell's PATH says nothing about the PATH a harness starts with."""
    home, env = setup
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "brain hook session-start", "timeout": 30}]}]}}))
    code, found = rows(env, cwd=home)
    [command] = by_check(found)["hook command"]
    assert command["status"] == "warn" and "this shell only" in command["detail"], command
    assert "brain hooks install claude" in command["detail"]


def test_doctor_runs_the_hook_as_a_harness_does_and_fails_when_brain_home_is_not_carried(setup, brain_home):
    """BRAIN_HOME exported in this shell reaches no harness: a hook installed before it was
    set finds no vault when started with PATH and HOME only, and the doctor says so."""
    home, env = setup
    plain = {k: v for k, v in env.items() if k not in ("BRAIN_HOME", "BRAIN_MODEL_CACHE", "XDG_CONFIG_HOME")}
    assert brain(plain, "hooks", "install", "claude").returncode == 0
    code, found = rows(env, cwd=home)
    checks = by_check(found)
    [where] = checks["hook environment"]
    assert where["status"] == "fail" and "finds no vault" in where["detail"], where
    assert "brain hooks install claude" in where["detail"]
    [sim] = checks["simulated session start"]
    assert sim["status"] == "fail", sim
    assert code == 1

    assert brain(env, "hooks", "install", "claude").returncode == 0  # from the shell that has BRAIN_HOME
    code, found = rows(env, cwd=home)
    checks = by_check(found)
    assert checks["hook environment"][0]["status"] == "ok", checks["hook environment"]
    assert "characters of context" in checks["simulated session start"][0]["detail"]
    assert code == 0, found
