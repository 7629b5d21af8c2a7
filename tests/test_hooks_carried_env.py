"""A harness does not start in the user's shell: the configs `brain hooks install` and
`brain mcp install` write carry the BRAIN_HOME (and BRAIN_VAULT, BRAIN_MODEL_CACHE) that
shell had, in each host's own format (hooks/carried_env.py), and the command they name
works when started with nothing but PATH, HOME and what the config carries."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from hooks_fixtures import FACT, VENV_BIN, brain, claude_payload, env_for, seed_home

from brain.hooks import mcp_register
from brain.hooks.carried_env import carried_env, split_env, with_env

BASE_PATH = VENV_BIN + os.pathsep + "/usr/bin:/bin"


@pytest.fixture
def user(tmp_path, brain_home):
    """A user whose BRAIN_HOME is not the default folder (it is brain_home, a temp
    folder), with a seeded vault; HOME is a fresh folder the harness configs go in."""
    seed_home(brain_home, deadline_ms=30000)
    home = tmp_path / "home"
    home.mkdir()
    env = env_for(brain_home, HOME=str(home), PATH=BASE_PATH)
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
              "XDG_RUNTIME_DIR"):
        env.pop(k, None)
    yield home, env
    brain(env, "daemon", "stop")


def bare(home: Path, carried: dict | None = None) -> dict:
    """What `env -i PATH=… HOME=…` leaves a harness's command, plus what its config carries."""
    return {"PATH": BASE_PATH, "HOME": str(home), **(carried or {})}


def test_the_hook_command_carries_brain_home_and_gives_context_in_a_bare_environment(user, brain_home):
    home, env = user
    r = brain(env, "hooks", "install", "claude")
    assert r.returncode == 0, r.stderr
    [group] = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    command = group["hooks"][0]["command"]
    # Claude Code runs the string through a shell with its own environment, not this one
    out = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(claude_payload(home)).encode(),
                         capture_output=True, env=bare(home), timeout=60)
    assert out.returncode == 0
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert FACT in context
    assert f"BRAIN_HOME={brain_home}" in command


def test_an_install_run_again_after_brain_home_was_set_rewrites_the_command(user, brain_home):
    home, env = user
    plain = {k: v for k, v in env.items() if k not in ("BRAIN_HOME", "BRAIN_MODEL_CACHE")}
    assert brain(plain, "hooks", "install", "codex").returncode == 0
    hooks = home / ".codex" / "hooks.json"
    assert "BRAIN_HOME" not in hooks.read_text()
    r = brain(env, "hooks", "install", "codex")
    assert r.returncode == 0 and b"already installed" not in r.stdout, r.stdout
    data = json.loads(hooks.read_text())["hooks"]
    for event in ("SessionStart", "PostCompact"):
        [group] = data[event]
        [handler] = group["hooks"]  # replaced in place, not added beside the old one
        carried, argv = split_env(handler["command"].split())
        assert carried["BRAIN_HOME"] == str(brain_home) and argv[-2:] == ["hook", "session-start"]
    assert brain(env, "hooks", "uninstall", "codex").returncode == 0
    assert "hooks" not in json.loads(hooks.read_text() if hooks.exists() else "{}")


def test_mcp_file_hosts_carry_the_environment_and_the_server_finds_the_vault(user, brain_home):
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from daemon_fixtures import body_of

    home, env = user
    files = {"cursor": (home / ".cursor" / "mcp.json", "mcpServers", "env"),
             "vscode": (home / ".config" / "Code" / "User" / "mcp.json", "servers", "env"),
             "gemini": (home / ".gemini" / "settings.json", "mcpServers", "env"),
             "opencode": (home / ".config" / "opencode" / "opencode.json", "mcp", "environment")}
    for host, (path, key, env_key) in files.items():
        r = brain(env, "mcp", "install", host)
        assert r.returncode == 0, r.stderr
        entry = json.loads(path.read_text())[key]["brain"]
        assert entry[env_key]["BRAIN_HOME"] == str(brain_home), (host, entry)
        assert brain(env, "mcp", "install", host).stdout.decode().startswith("already registered")
    entry = json.loads(files["cursor"][0].read_text())["mcpServers"]["brain"]

    async def go():
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=bare(home, entry["env"]))
        async with stdio_client(params) as (rd, wr):
            async with ClientSession(rd, wr) as s:
                await s.initialize()
                return body_of(await s.call_tool("context_pack", {"entities": "people/me"}))

    pack = anyio.run(go)
    assert FACT in pack["text"]


def test_claude_and_codex_registrations_carry_it_in_their_own_forms(user, brain_home):
    home, env = user
    r = brain(env, "mcp", "install", "codex")  # no codex on PATH: the command and block to paste
    assert r.returncode == 1
    out = r.stdout.decode()
    assert f"--env BRAIN_HOME={brain_home}" in out
    block = out[out.index("[mcp_servers.brain]"):]
    entry = tomllib.loads(block)["mcp_servers"]["brain"]
    assert entry["env"]["BRAIN_HOME"] == str(brain_home) and entry["args"] == ["serve", "--surface", "starter"]
    r = brain(env, "mcp", "install", "claude")
    out = r.stdout.decode()
    assert "claude mcp add-json --scope user brain" in out
    entry = json.loads(out[out.index("{", out.index("by hand")):])["mcpServers"]["brain"]
    assert entry["env"]["BRAIN_HOME"] == str(brain_home)
    # the CLI form: every carried variable as its own --env, before the server's argv
    argv = mcp_register.mcp_add_argv("codex", ["/x/brain"], env={"BRAIN_HOME": "/h", "BRAIN_VAULT": "/v"})
    assert argv == ["codex", "mcp", "add", "brain", "--env", "BRAIN_HOME=/h", "--env", "BRAIN_VAULT=/v", "--",
                    "/x/brain", "serve", "--surface", "starter"]
    add_json = mcp_register.mcp_add_argv("claude", ["/x/brain"], env={"BRAIN_HOME": "/h"})
    assert add_json[:6] == ["claude", "mcp", "add-json", "--scope", "user", "brain"]
    assert json.loads(add_json[6]) == {"type": "stdio", "command": "/x/brain", "args": ["serve", "--surface",
                                                                                    "starter"],
                                       "env": {"BRAIN_HOME": "/h"}}


def test_carried_paths_are_absolute_and_the_command_splits_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = carried_env({"BRAIN_HOME": "rel/home", "BRAIN_VAULT": "~/notes", "OTHER": "x"})
    assert env == {"BRAIN_HOME": str(tmp_path / "rel" / "home"),
                   "BRAIN_VAULT": str(Path("~/notes").expanduser().resolve())}
    words = with_env(["/b/brain", "hook", "session-start"], env)
    assert split_env(words) == (env, ["/b/brain", "hook", "session-start"])
    assert split_env(["BRAIN_HOME=/h", "brain", "hook", "session-start"]) == (
        {"BRAIN_HOME": "/h"}, ["brain", "hook", "session-start"])
    assert split_env(["/b/brain", "hook", "session-start"]) == ({}, ["/b/brain", "hook", "session-start"])
