"""`brain connect --install HOST` for the MCP hosts configured by a JSON file
(opencode, Cursor, VS Code, Gemini CLI): the stdio relay under the remote's
name, beside brain's own entry, and never the token in the file."""

from __future__ import annotations

import json

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)
from test_connect import client, client_home, server  # noqa: F401  (fixtures)

from brain.hooks import mcp_files

pytestmark = pytest.mark.usefixtures("reaper")


@pytest.mark.parametrize("host", sorted(mcp_files.FILE_HOSTS))
def test_install_a_file_host_registers_the_relay_not_the_token(server, client_home, tmp_path, host):  # noqa: F811
    url, token = server
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home)}
    cfg = mcp_files.FILE_HOSTS[host].path("user", environ=env)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    # brain's own entry is there already; the remote goes beside it under its own name
    cfg.write_text(mcp_files.add_server(mcp_files.FILE_HOSTS[host], None, ["brain", "serve", "--surface", "verbs"]))
    r = client(client_home, "connect", url, "--token", token, "--name", "lab", "--install", host, extra_env=env)
    assert r.returncode == 0, r.stderr
    text = cfg.read_text()
    assert token not in text
    doc = json.loads(text)
    servers = doc[mcp_files.FILE_HOSTS[host].servers_key]
    servers = servers.get("servers", servers) if host == "opencode" else servers
    assert set(servers) >= {"brain", "lab"}
    entry = json.dumps(servers["lab"])
    assert '"serve", "--remote", "lab"' in entry and "--surface" not in entry
    again = client(client_home, "connect", url, "--token", token, "--name", "lab", "--install", host, extra_env=env)
    assert again.returncode == 0 and b"already registered" in again.stdout and cfg.read_text() == text


def test_install_an_unknown_host_is_refused_before_anything_is_stored(server, client_home):  # noqa: F811
    url, token = server
    r = client(client_home, "connect", url, "--token", token, "--name", "lab", "--install", "emacs")
    assert r.returncode == 1 and b"no such MCP host" in r.stderr and b"gemini" in r.stderr
    assert b"lab" not in client(client_home, "connect", "--list").stdout
