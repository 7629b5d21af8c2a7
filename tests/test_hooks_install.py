"""`brain hooks install|uninstall` and `brain mcp install` against real files
in a temporary HOME: golden outputs, idempotence, exact restoration, backups,
dry runs, and files we must refuse to touch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.hooks import codex_flag
from brain.hooks import install as inst
from brain.hooks import mcp_register
from brain.hooks.harnesses import HARNESSES

GOLDEN = Path(__file__).parent / "golden" / "hooks"
BRAIN = [sys.executable, "-m", "brain.cli.entry"]
VENV_BIN = str(Path(sys.executable).parent)
GOLDEN_BRAIN = "/opt/brain/bin/brain"       # the program the golden files show
CMD = f"{GOLDEN_BRAIN} hook session-start"
INSTALLED = str(Path(VENV_BIN) / "brain")   # what an install run by this interpreter writes
CLAUDE = HARNESSES["claude"].events
CODEX = HARNESSES["codex"].events


def golden(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


def installed(name: str) -> str:
    """A golden file as a real install writes it: with this installation's absolute path."""
    return golden(name).replace(GOLDEN_BRAIN, INSTALLED)


class Home(type(Path())):
    """A HOME folder that carries the environment a command runs with."""

    env: dict


@pytest.fixture
def home(tmp_path, brain_home):
    """A user's HOME with no Claude or Codex CLI on PATH; `brain` resolves. Nothing moves
    brain's state (no BRAIN_HOME): the configs written carry no environment (the ones that
    do: test_hooks_carried_env.py), and every default folder is under this HOME."""
    h = Home(tmp_path / "home")
    h.mkdir()
    env = dict(os.environ, HOME=str(h), PATH=VENV_BIN + os.pathsep + "/usr/bin:/bin")
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "BRAIN_VAULT", "BRAIN_HOME", "BRAIN_MODEL_CACHE",
              "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        env.pop(k, None)
    h.env = env
    return h


def run(home, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=home.env, cwd=cwd or home,
                          timeout=60)


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak*"))


# -- golden transforms ---------------------------------------------------------------


@pytest.mark.parametrize("name,events", [("claude_settings", CLAUDE), ("claude_settings_four_space", CLAUDE),
                                         ("codex_hooks", CODEX)])
def test_golden_install_and_exact_removal(name, events):
    before, after = golden(f"{name}.before.json"), golden(f"{name}.after.json")
    assert inst.add_hooks(before, events, CMD, 5) == after
    assert inst.add_hooks(after, events, CMD, 5) == after          # idempotent
    assert inst.remove_hooks(after) == before                      # byte for byte
    # every key that was there keeps its value and its place
    b, a = json.loads(before), json.loads(after)
    assert list(a)[: len(b)] == list(b)
    for key in b:
        if key != "hooks":
            assert a[key] == b[key]


def test_golden_codex_feature_flag():
    before, after = golden("codex_config.before.toml"), golden("codex_config.after.toml")
    assert codex_flag.enable_codex_hooks(before) == (after, None)
    assert codex_flag.enable_codex_hooks(after) == (after, None)
    assert codex_flag.codex_flag_state(after) is True


def test_feature_flag_added_to_files_without_a_features_table():
    assert codex_flag.enable_codex_hooks(None)[0] == "[features]\nhooks = true\n"
    assert codex_flag.enable_codex_hooks('model = "o3"')[0] == 'model = "o3"\n\n[features]\nhooks = true\n'
    text, warning = codex_flag.enable_codex_hooks("[features]\nhooks = false\n")
    assert text == "[features]\nhooks = false\n" and "switched off" in warning


# -- the command, end to end ------------------------------------------------------------


def test_claude_install_is_idempotent_backs_up_and_uninstall_restores_bytes(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(golden("claude_settings.before.json").encode())
    r = run(home, "hooks", "install", "claude")
    assert r.returncode == 0, r.stderr
    assert settings.read_bytes().decode() == installed("claude_settings.after.json")
    [bak] = backups(settings)
    assert bak.read_bytes() == golden("claude_settings.before.json").encode()

    r = run(home, "hooks", "install", "claude")
    assert r.returncode == 0 and "already installed" in r.stdout
    assert settings.read_bytes().decode() == installed("claude_settings.after.json")
    assert len(backups(settings)) == 1

    r = run(home, "hooks", "uninstall", "claude")
    assert r.returncode == 0, r.stderr
    assert settings.read_bytes() == golden("claude_settings.before.json").encode()
    # install, uninstall, install again: still one backup file, holding what the last write replaced
    assert run(home, "hooks", "install", "claude").returncode == 0
    assert backups(settings) == [settings.with_name("settings.json.bak")]
    assert backups(settings)[0].read_bytes() == golden("claude_settings.before.json").encode()
    assert run(home, "hooks", "uninstall", "claude").returncode == 0
    r = run(home, "hooks", "uninstall", "claude")
    assert r.returncode == 0 and "not installed" in r.stdout


def test_install_into_a_missing_file_and_uninstall_removes_it_again(home):
    settings = home / ".claude" / "settings.json"
    assert run(home, "hooks", "install", "claude").returncode == 0
    data = json.loads(settings.read_text())
    [group] = data["hooks"]["SessionStart"]
    assert group["matcher"] == "startup|resume|clear|compact|fork"
    assert group["hooks"] == [{"type": "command", "command": f"{INSTALLED} hook session-start", "timeout": 5}]
    assert settings.stat().st_mode & 0o777 == 0o600
    assert run(home, "hooks", "uninstall", "claude").returncode == 0
    assert not settings.exists()


def test_uninstall_after_other_edits_removes_only_ours(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(golden("claude_settings.before.json"))
    assert run(home, "hooks", "install", "claude").returncode == 0
    edited = settings.read_text().replace('"model": "opus"', '"model": "sonnet"')
    settings.write_text(edited)
    assert run(home, "hooks", "uninstall", "claude").returncode == 0
    assert settings.read_text() == golden("claude_settings.before.json").replace('"opus"', '"sonnet"')


def test_codex_install_adds_both_events_and_the_flag_and_uninstall_restores_both(home):
    codex = home / ".codex"
    codex.mkdir()
    (codex / "hooks.json").write_text(golden("codex_hooks.before.json"))
    (codex / "config.toml").write_text(golden("codex_config.before.toml"))
    r = run(home, "hooks", "install", "codex")
    assert r.returncode == 0, r.stderr
    assert (codex / "hooks.json").read_text() == installed("codex_hooks.after.json")
    assert (codex / "config.toml").read_text() == golden("codex_config.after.toml")
    assert len(backups(codex / "hooks.json")) == 1 and len(backups(codex / "config.toml")) == 1
    assert run(home, "hooks", "install", "codex").stdout.startswith("already installed")
    r = run(home, "hooks", "uninstall", "codex")
    assert r.returncode == 0, r.stderr
    assert (codex / "hooks.json").read_bytes() == golden("codex_hooks.before.json").encode()
    assert (codex / "config.toml").read_bytes() == golden("codex_config.before.toml").encode()


def test_codex_home_env_is_honoured(home, tmp_path):
    ch = tmp_path / "elsewhere"
    home.env["CODEX_HOME"] = str(ch)
    assert run(home, "hooks", "install", "codex").returncode == 0
    assert inst.has_our_hooks((ch / "hooks.json").read_text())
    assert (ch / "config.toml").read_text() == "[features]\nhooks = true\n"
    assert not (home / ".codex").exists()


def test_dry_run_prints_a_diff_and_writes_nothing(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(golden("claude_settings.before.json"))
    r = run(home, "hooks", "install", "claude", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert f"--- {settings}" in r.stdout and f'+            "command": "{INSTALLED} hook session-start",' in r.stdout
    assert "nothing was written" in r.stdout
    assert settings.read_text() == golden("claude_settings.before.json") and not backups(settings)
    r = run(home, "hooks", "install", "codex", "--dry-run")
    assert "+hooks = true" in r.stdout and not (home / ".codex").exists()
    assert run(home, "hooks", "install", "claude").returncode == 0
    r = run(home, "hooks", "uninstall", "claude", "--dry-run")
    assert r.returncode == 0 and f'-            "command": "{INSTALLED} hook session-start",' in r.stdout
    assert inst.has_our_hooks(settings.read_text())


def test_project_install_goes_to_the_repository_root(home):
    repo = home / "code" / "lighthouse"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    r = run(home, "hooks", "install", "claude", "--project", cwd=repo / "src")
    assert r.returncode == 0, r.stderr
    # a personal hook: the project's local settings, not the shared settings.json
    assert inst.has_our_hooks((repo / ".claude" / "settings.local.json").read_text())
    assert not (repo / ".claude" / "settings.json").exists() and not (home / ".claude").exists()
    r = run(home, "hooks", "install", "codex", "--project", cwd=repo)
    assert inst.has_our_hooks((repo / ".codex" / "hooks.json").read_text())
    assert (home / ".codex" / "config.toml").exists()  # the feature flag is a user setting


@pytest.mark.parametrize("content", ["{ not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"SessionStart": {}}}'])
def test_files_we_cannot_edit_safely_are_left_alone(home, content):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    r = run(home, "hooks", "install", "claude")
    assert r.returncode == 1 and "nothing was changed" in r.stderr
    assert settings.read_text() == content and not backups(settings)


def test_uninstall_from_a_file_that_does_not_parse_says_so(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    r = run(home, "hooks", "uninstall", "claude")
    assert r.returncode == 1 and "not valid JSON" in r.stderr and settings.read_text() == '{"hooks": '


def test_unknown_harness_names_the_choices(home):
    r = run(home, "hooks", "install", "cursor")
    assert r.returncode == 2 and "claude, codex" in r.stderr


def test_our_handler_is_recognised_in_its_spellings():
    assert inst.is_our_handler({"type": "command", "command": "brain hook session-start"})
    assert inst.is_our_handler({"type": "command", "command": "'/opt/my tools/brain' hook session-start"})
    assert inst.is_our_handler({"command": "/usr/bin/python3 -m brain.cli.entry hook session-start"})
    assert not inst.is_our_handler({"type": "command", "command": "other hook session-start"})
    assert not inst.is_our_handler({"type": "prompt", "command": "brain hook session-start"})
    assert not inst.is_our_handler("brain hook session-start")


# -- MCP registration ------------------------------------------------------------------


def test_mcp_install_without_the_harness_cli_prints_the_command_and_config(home):
    r = run(home, "mcp", "install", "claude")
    # nothing was registered: a non-zero exit, an error naming the fix, and the ways to do it by hand
    assert r.returncode == 1
    assert "not on PATH" in r.stderr and "fix:" in r.stderr
    assert f"claude mcp add --scope user brain -- {INSTALLED} serve --surface starter" in r.stdout
    block = r.stdout[r.stdout.index("{"):]
    assert json.loads(block) == {"mcpServers": {"brain": {"type": "stdio", "command": INSTALLED,
                                                          "args": ["serve", "--surface", "starter"]}}}
    r = run(home, "mcp", "install", "codex")
    assert r.returncode == 1
    assert f"codex mcp add brain -- {INSTALLED} serve --surface starter" in r.stdout
    assert f'[mcp_servers.brain]\ncommand = "{INSTALLED}"\nargs = ["serve", "--surface", "starter"]' in r.stdout
    assert run(home, "mcp", "install", "claude", "--scope", "team").returncode == 2


def test_mcp_add_argv_shapes():
    assert mcp_register.mcp_add_argv("claude", ["/x/brain"], "project") == [
        "claude", "mcp", "add", "--scope", "project", "brain", "--", "/x/brain", "serve", "--surface", "starter"]
    assert mcp_register.mcp_add_argv("codex", ["brain"]) == ["codex", "mcp", "add", "brain", "--", "brain", "serve",
                                                     "--surface", "starter"]


def test_codex_deprecated_feature_key_is_renamed_in_place():
    before = "[features]\ncodex_hooks = true   # on\nother = 1\n"
    after, warning = codex_flag.enable_codex_hooks(before)
    assert after == "[features]\nhooks = true   # on\nother = 1\n" and warning is None
    off, warning = codex_flag.enable_codex_hooks("[features]\ncodex_hooks = false\n")
    assert off == "[features]\nhooks = false\n" and "switched off" in warning
    both = "[features]\nhooks = true\ncodex_hooks = true\n"
    assert codex_flag.enable_codex_hooks(both) == (both, None)


def test_claude_matcher_includes_fork():
    assert "fork" in inst.SESSION_MATCHER.split("|")


def test_every_host_config_names_brain_by_its_absolute_path_even_with_brain_on_path(home):
    """A harness does not start in this shell: a bare `brain` that resolves here (an
    activated virtual environment) fails there, silently. `brain` is on PATH in `home`."""
    assert run(home, "hooks", "install", "claude").returncode == 0
    [group] = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"] == f"{INSTALLED} hook session-start"
    files = {"cursor": (home / ".cursor" / "mcp.json", "mcpServers"),
             "vscode": (home / ".config" / "Code" / "User" / "mcp.json", "servers"),
             "gemini": (home / ".gemini" / "settings.json", "mcpServers"),
             "opencode": (home / ".config" / "opencode" / "opencode.json", "mcp")}
    for host, (path, key) in files.items():
        r = run(home, "mcp", "install", host)
        assert r.returncode == 0, r.stderr
        entry = json.loads(path.read_text())[key]["brain"]
        argv = entry["command"] if host == "opencode" else [entry["command"], *entry["args"]]
        assert argv == [INSTALLED, "serve", "--surface", "starter"], (host, argv)
        assert os.access(argv[0], os.X_OK)
