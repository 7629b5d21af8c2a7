"""`brain mcp install opencode|cursor|vscode|gemini`: each host's config file,
in that host's documented format (fixtures in tests/golden/mcp, format notes in
docs/harnesses.md), edited without touching anything else; scopes honoured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon_fixtures import configured, reaper, small_vault  # noqa: F401  (fixtures)

from brain.hooks import mcp_files

GOLDEN = Path(__file__).parent / "golden" / "mcp"
ARGV = ["/opt/brain/bin/brain", "serve", "--surface", "verbs"]

# what each host's documented format requires of a local (stdio) server entry
EXPECTED = {
    "opencode": {"type": "local", "command": ARGV},
    "cursor": {"command": ARGV[0], "args": ARGV[1:]},
    "vscode": {"type": "stdio", "command": ARGV[0], "args": ARGV[1:]},
    "gemini": {"command": ARGV[0], "args": ARGV[1:]},
}
CONTAINER = {"opencode": ("mcp",), "cursor": ("mcpServers",), "vscode": ("servers",), "gemini": ("mcpServers",)}


def _at(data: dict, keys) -> dict:
    for k in keys:
        data = data[k]
    return data


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_entry_lands_in_the_documented_shape_and_keeps_the_rest(name):
    host = mcp_files.FILE_HOSTS[name]
    before = (GOLDEN / f"{name}.before.json").read_text()
    after = mcp_files.add_server(host, before, ARGV)
    old, new = json.loads(before), json.loads(after)
    servers = _at(new, CONTAINER[name])
    assert servers["brain"] == EXPECTED[name]
    assert servers["docs"] == _at(old, CONTAINER[name])["docs"]  # the user's server is untouched
    assert {k: v for k, v in new.items() if k not in CONTAINER[name][:1]} == \
        {k: v for k, v in old.items() if k not in CONTAINER[name][:1]}
    assert before.splitlines()[:2] == after.splitlines()[:2]  # a splice, not a re-dump
    assert mcp_files.add_server(host, after, ARGV) == after  # idempotent


def test_opencode_2_nested_servers_object_is_used_when_present():
    host = mcp_files.FILE_HOSTS["opencode"]
    after = json.loads(mcp_files.add_server(host, (GOLDEN / "opencode2.before.json").read_text(), ARGV))
    assert after["mcp"]["servers"]["brain"] == EXPECTED["opencode"] and "brain" not in after["mcp"]


def test_a_moved_install_replaces_our_entry_only():
    host = mcp_files.FILE_HOSTS["cursor"]
    once = mcp_files.add_server(host, (GOLDEN / "cursor.before.json").read_text(), ["/old/brain", *ARGV[1:]])
    twice = json.loads(mcp_files.add_server(host, once, ARGV))
    assert twice["mcpServers"]["brain"]["command"] == ARGV[0] and "docs" in twice["mcpServers"]


def test_empty_or_missing_file_gets_a_minimal_config():
    for name, host in mcp_files.FILE_HOSTS.items():
        assert _at(json.loads(mcp_files.add_server(host, None, ARGV)), CONTAINER[name])["brain"] == EXPECTED[name]


def run(home: Path, *args, cwd: Path | None = None):
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), BRAIN_HOME=str(home / ".bh"))
    return subprocess.run([sys.executable, "-m", "brain.cli.entry", *args], capture_output=True, text=True,
                          env=env, cwd=str(cwd or home), timeout=60)


def test_cli_writes_user_and_project_files_and_refuses_scopes_a_host_lacks(tmp_path):
    home = tmp_path / "home"
    repo = home / "code" / "app"
    (repo / ".git").mkdir(parents=True)
    r = run(home, "mcp", "install", "gemini", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert "brain" in json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]
    r = run(home, "mcp", "install", "vscode", "--scope", "project", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert json.loads((repo / ".vscode" / "mcp.json").read_text())["servers"]["brain"]["type"] == "stdio"
    r = run(home, "mcp", "install", "opencode", cwd=repo)
    assert r.returncode == 0 and (home / ".config" / "opencode" / "opencode.json").is_file()
    r = run(home, "mcp", "install", "cursor", "--scope", "local", cwd=repo)
    assert r.returncode == 2 and "no local scope" in r.stderr and not (home / ".cursor").exists()
    r = run(home, "mcp", "install", "codex", "--scope", "project", "--dry-run", cwd=repo)
    assert r.returncode == 2 and "--scope project" in r.stderr
    r = run(home, "mcp", "install", "cursor", "--dry-run", cwd=repo)
    assert r.returncode == 0 and '"mcpServers"' in r.stdout and not (home / ".cursor").exists()


def test_the_installed_server_can_read_the_pages_the_context_points_to(tmp_path, configured, reaper):
    """The context says "use get_page/entity before relying on details": the server
    `brain mcp install` registers must have get_page, and still hide private pages."""
    import re

    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from daemon_fixtures import body_of, child_env
    home = tmp_path / "home"
    home.mkdir()
    env = dict(child_env(), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    r = subprocess.run([sys.executable, "-m", "brain.cli.entry", "mcp", "install", "cursor"], capture_output=True,
                       text=True, env=env, cwd=str(home), timeout=60)
    assert r.returncode == 0, r.stderr
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["brain"]

    async def go():
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
        async with stdio_client(params) as (rd, wr):
            async with ClientSession(rd, wr) as s:
                await s.initialize()
                pack = body_of(await s.call_tool("context_pack", {"entities": "people/alice-example"}))
                assert "get_page" in pack["text"]
                slugs = re.findall(r"→ `([^`]+)`", pack["text"])
                assert slugs
                pages = [await s.call_tool("get_page", {"slug": slug}) for slug in slugs]
                secret = await s.call_tool("get_page", {"slug": "people/secret"})
                return pages, secret

    pages, secret = anyio.run(go)
    reaper()
    for page in pages:
        assert not page.is_error, body_of(page)
        assert "# Alice Example" in body_of(page)["content"]
    assert secret.is_error and body_of(secret)["error"] == "not_found"


def test_a_vscode_file_with_comments_and_trailing_commas_is_edited_keeping_them():
    """VS Code writes mcp.json as JSONC: comments and trailing commas are normal there."""
    host = mcp_files.FILE_HOSTS["vscode"]
    before = (GOLDEN / "vscode_jsonc.before.json").read_text()
    argv = ["/opt/brain/bin/brain", "serve", "--surface", "starter"]
    after = mcp_files.add_server(host, before, argv)
    assert after == (GOLDEN / "vscode_jsonc.after.json").read_text()
    assert mcp_files.add_server(host, after, argv) == after  # idempotent
    moved = mcp_files.add_server(host, after, ["/new/brain", *argv[1:]])
    assert moved == after.replace('"/opt/brain/bin/brain"', '"/new/brain"')  # only our value changed
    for comment in ("// Servers for this profile", "// asked once", "/* the team's documentation server */",
                    "// from the input above"):
        assert moved.count(comment) == 1


def test_a_comment_inside_our_own_old_entry_is_not_silently_dropped():
    host = mcp_files.FILE_HOSTS["vscode"]
    text = '{\n  "servers": {\n    "brain": {\n      // pinned by hand\n      "command": "/old/brain"\n    }\n  }\n}\n'
    with pytest.raises(mcp_files.InstallError, match="comment"):
        mcp_files.add_server(host, text, ["/new/brain", "serve"])


def test_cli_edits_a_jsonc_user_file(tmp_path):
    home = tmp_path / "home"
    user = home / ".config" / "Code" / "User"
    user.mkdir(parents=True)
    (user / "mcp.json").write_text((GOLDEN / "vscode_jsonc.before.json").read_text())
    r = run(home, "mcp", "install", "vscode")
    assert r.returncode == 0, r.stderr
    text = (user / "mcp.json").read_text()
    assert "// asked once" in text and '"brain": {' in text and (user / "mcp.json.bak").is_file()
