"""`brain connect` from a second brain home (a client machine with no vault) to a real
`brain serve --http` on loopback: check, store, --remote calls, the stdio relay, the
session-start hook, harness registration, --list and --remove."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, body_of, child_env, configured, daemon, reaper, small_vault, stop_pid,
)
from hooks_fixtures import claude_payload, context_of
from test_transport_http import _start_http

from brain.daemon.http.tokens import create_token

pytestmark = pytest.mark.usefixtures("reaper")


@pytest.fixture
def server(daemon, places):
    token = create_token(places, "laptop", can_write=True)
    proc, url = _start_http()
    yield url, token
    stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


@pytest.fixture
def client_home(tmp_path):
    """Another machine, as far as brain can tell: its own BRAIN_HOME, no vault."""
    home = tmp_path / "client-home"
    home.mkdir()
    return home


def client(home, *args, input: bytes | None = None, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(child_env(), BRAIN_HOME=str(home), **(extra_env or {}))
    env.pop("BRAIN_VAULT", None)
    return subprocess.run([BRAIN, *args], input=input, capture_output=True, env=env, timeout=120)


def test_connect_checks_stores_and_answers_remote_calls(server, client_home):
    url, token = server
    r = client(client_home, "connect", url, "--token", token, "--name", "lab")
    assert r.returncode == 0, r.stderr
    assert b"connected 'lab'" in r.stdout and b"laptop" in r.stdout and b"read + write" in r.stdout
    config = (client_home / "config" / "config.toml").read_text()
    assert url in config and token not in config  # the secret stays out of the config
    token_file = client_home / "state" / "remotes" / "lab.token"
    assert token_file.read_text().strip() == token and stat.S_IMODE(token_file.stat().st_mode) == 0o600

    saved = client(client_home, "remember", "Alice plays chess", "-p", "remote test", "-e", "people/alice-example",
                   "--remote", "lab", "--json")
    assert saved.returncode == 0, saved.stderr
    got = client(client_home, "recall", "--entity", "people/alice-example", "--remote", "lab", "--json")
    assert got.returncode == 0, got.stderr
    assert [f["fact"] for f in json.loads(got.stdout)["facts"]] == ["Alice plays chess"]
    # without --remote this machine has no brain of its own
    local = client(client_home, "recall", "--entity", "people/alice-example")
    assert local.returncode == 1 and b"brain init" in local.stderr

    listed = client(client_home, "connect", "--list")
    assert b"lab" in listed.stdout and url.encode() in listed.stdout
    gone = client(client_home, "connect", "--remove", "lab")
    assert gone.returncode == 0 and not token_file.exists()
    assert b"lab" not in client(client_home, "connect", "--list").stdout


def test_a_bad_token_or_url_is_refused_with_the_fix(server, client_home):
    url, _ = server
    r = client(client_home, "connect", url, "--token", "brain_wrong")
    assert r.returncode == 1 and b"401" in r.stderr and b"fix:" in r.stderr
    r = client(client_home, "connect", url.replace("/mcp", "/nope"), "--token", "brain_wrong")
    assert r.returncode == 1
    assert not (client_home / "state" / "remotes").exists()


def test_install_claude_registers_the_url_and_a_header_helper(server, client_home, tmp_path):
    url, token = server
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "claude-argv.json"
    fake = bin_dir / "claude"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n")
    fake.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    r = client(client_home, "connect", url, "--token", token, "--name", "lab", "--install", "claude",
               extra_env={"PATH": path})
    assert r.returncode == 0, r.stderr
    argv = json.loads(record.read_text())
    assert argv[:5] == ["mcp", "add-json", "--scope", "user", "lab"]
    spec = json.loads(argv[5])
    assert spec["type"] == "http" and spec["url"] == url and token not in argv[5]

    # what Claude Code does at connection time: run the helper, send its headers
    helper = subprocess.run(spec["headersHelper"], shell=True, capture_output=True, timeout=60,
                            env=dict(child_env(), BRAIN_HOME=str(client_home)))
    headers = json.loads(helper.stdout)
    assert headers == {"Authorization": f"Bearer {token}"}

    async def first_call():
        import httpx2 as httpx
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with httpx.AsyncClient(headers=headers, timeout=30) as hc:
            async with streamable_http_client(spec["url"], http_client=hc) as (rd, wr):
                async with ClientSession(rd, wr) as s:
                    await s.initialize()
                    return body_of(await s.call_tool("entity", {"name": "Alice Example"}))

    assert anyio.run(first_call)["found"] is True


def test_stdio_relay_and_the_session_start_hook_use_the_remote(server, client_home, tmp_path):
    url, token = server
    assert client(client_home, "connect", url, "--token", token, "--name", "lab").returncode == 0

    async def over_relay():
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = dict(child_env(), BRAIN_HOME=str(client_home))
        env.pop("BRAIN_VAULT", None)
        params = StdioServerParameters(command=BRAIN, args=["serve", "--remote", "lab"], env=env)
        async with stdio_client(params) as (rd, wr):
            async with ClientSession(rd, wr) as s:
                await s.initialize()
                names = {t.name for t in (await s.list_tools()).tools}
                card = body_of(await s.call_tool("entity", {"name": "Ally"}))
                who = body_of(await s.call_tool("whoami", {}))
                return names, card, who

    names, card, who = anyio.run(over_relay)
    assert "recall" in names and card["found"] is True and who["client_id"] == "laptop"

    assert client(client_home, "config", "set", "hooks.remote", "lab").returncode == 0
    assert client(client_home, "config", "set", "hooks.standing_entities", "people/alice-example").returncode == 0
    hook = client(client_home, "hook", "session-start", input=json.dumps(claude_payload(tmp_path)).encode())
    assert hook.returncode == 0
    assert "Alice Example" in context_of(hook.stdout)
