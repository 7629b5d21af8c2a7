"""`brain mcp install HOST` twice is nothing to do, and `brain mcp uninstall HOST` undoes
exactly what the install wrote, for every host: Claude Code and Codex through their own
CLIs (stand-ins on PATH that keep their registry in the harness's real file and refuse
a second `mcp add` as Claude Code does), the JSON-file hosts by a splice that keeps the
user's other servers and settings, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]
VENV_BIN = str(Path(sys.executable).parent)

# Claude Code keeps user-scope servers in ~/.claude.json `mcpServers`; Codex in
# $CODEX_HOME/config.toml `[mcp_servers.NAME]` (docs/harnesses.md)
FAKE_CLI = r'''#!{python}
import json, os, sys, tomllib
from pathlib import Path
prog, args = Path(sys argv_0).name, sys.argv[1:]
home = Path(os.environ["HOME"])
path = home / ".claude.json" if prog == "claude" else home / ".codex" / "config.toml"
with open(home / f"{{prog}}-calls.txt", "a") as log:
    log.write(" ".join(args) + "\n")
if path.suffix == ".toml":
    servers = tomllib.loads(path.read_text()).get("mcp_servers", {{}}) if path.exists() else {{}}
else:
    data = json.loads(path.read_text()) if path.exists() else {{}}
    servers = data.setdefault("mcpServers", {{}})
if args[:2] == ["mcp", "add"]:
    rest = [a for a in args[2:] if a not in ("--scope", "user")]
    name, server = rest[0], rest[rest.index("--") + 1:]
    if name in servers:
        sys.exit(print(f"MCP server {{name}} already exists in user config", file=sys.stderr) or 1)
    servers[name] = {{"command": server[0], "args": server[1:]}}
elif args[:2] == ["mcp", "remove"]:
    name = args[-1]
    if name not in servers:
        sys.exit(print(f"No MCP server found with name: {{name}}", file=sys.stderr) or 1)
    del servers[name]
else:
    sys.exit(2)
path.parent.mkdir(parents=True, exist_ok=True)
if path.suffix == ".toml":
    path.write_text("".join(f'[mcp_servers.{{n}}]\ncommand = {{json.dumps(s["command"])}}\n'
                            f'args = {{json.dumps(s["args"])}}\n\n' for n, s in servers.items()))
else:
    path.write_text(json.dumps(data, indent=2))
'''.replace("sys argv_0", "sys.argv[0]")


@pytest.fixture
def env(tmp_path, brain_home):
    home = tmp_path / "home"
    bin_dir = tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    for prog in ("claude", "codex"):
        fake = bin_dir / prog
        fake.write_text(FAKE_CLI.format(python=sys.executable))
        fake.chmod(0o755)
    # nothing moves brain's state (no BRAIN_HOME): the entries carry no environment
    e = dict(os.environ, HOME=str(home), PATH=os.pathsep.join([str(bin_dir), VENV_BIN, "/usr/bin", "/bin"]))
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "BRAIN_VAULT", "BRAIN_HOME", "BRAIN_MODEL_CACHE",
              "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        e.pop(k, None)
    return e


def brain(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, timeout=60,
                          cwd=env["HOME"], stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_a_second_install_is_nothing_to_do_and_uninstall_removes_it_with_the_hosts_cli(env, host):
    home = Path(env["HOME"])
    config = home / (".claude.json" if host == "claude" else ".codex/config.toml")
    config.parent.mkdir(parents=True, exist_ok=True)
    keep = ({"mcpServers": {"docs": {"command": "docs-server", "args": []}}, "theme": "dark"} if host == "claude"
            else None)
    if keep:
        config.write_text(json.dumps(keep))
    first = brain(env, "mcp", "install", host)
    assert first.returncode == 0, first.stderr
    second = brain(env, "mcp", "install", host)
    assert second.returncode == 0 and "nothing to do" in second.stdout, (second.stdout, second.stderr)
    calls = (home / f"{host}-calls.txt").read_text().splitlines()
    assert [c for c in calls if c.startswith("mcp add")] == [calls[0]]  # the second install ran nothing

    r = brain(env, "mcp", "uninstall", host)
    assert r.returncode == 0, r.stderr
    assert (home / f"{host}-calls.txt").read_text().splitlines()[-1].startswith("mcp remove")
    assert "brain" not in config.read_text()
    if keep:
        assert json.loads(config.read_text()) == keep  # the user's other server and settings stay
    again = brain(env, "mcp", "uninstall", host)
    assert again.returncode == 0 and "nothing to do" in again.stdout, (again.stdout, again.stderr)


@pytest.mark.parametrize("host,relpath", [("cursor", ".cursor/mcp.json"), ("gemini", ".gemini/settings.json"),
                                          ("vscode", ".config/Code/User/mcp.json"),
                                          ("opencode", ".config/opencode/opencode.json")])
def test_uninstall_of_a_file_host_takes_out_only_brains_entry(env, host, relpath):
    path = Path(env["HOME"]) / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    key = {"cursor": "mcpServers", "gemini": "mcpServers", "vscode": "servers", "opencode": "mcp"}[host]
    before = '{\n  // mine\n  "theme": "dark",\n  "%s": {\n    "docs": {"command": "docs-server"}\n  }\n}\n' % key
    path.write_text(before)
    assert brain(env, "mcp", "install", host).returncode == 0
    assert '"brain"' in path.read_text()
    r = brain(env, "mcp", "uninstall", host)
    assert r.returncode == 0, r.stderr
    assert path.read_text() == before  # every byte of the user's file as it was
    again = brain(env, "mcp", "uninstall", host)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_uninstall_names_the_hosts_it_knows(env):
    r = brain(env, "mcp", "uninstall", "emacs")
    assert r.returncode == 2 and "unknown MCP host" in r.stderr
