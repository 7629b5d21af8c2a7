"""What Claude Code and Codex already hold for brain, read from their own config files.

`brain mcp install claude` a second time must say there is nothing to do (as the
JSON-file hosts do, mcp_files.py) instead of failing on `claude mcp add`'s
"already exists"; `brain mcp uninstall` must know whether there is anything to
remove. Their CLIs keep user-scope servers in one file each (docs/harnesses.md):
Claude Code in `~/.claude.json` under `mcpServers`, Codex in
`$CODEX_HOME/config.toml` under `[mcp_servers]`. Other scopes are left to the
harness's CLI (None: not known here).
"""

from __future__ import annotations

import json
import tomllib

from .harnesses import HARNESSES


def registered(name: str, scope: str, server: str, environ) -> dict | None:
    """The user-scope entry `server` of harness `name` ({"command", "args", "env"}), or None when
    it has none, the scope is another, or its file cannot be read."""
    if scope != "user":
        return None
    path = HARNESSES[name].mcp_file(environ)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError):
        return None
    servers = data.get("mcp_servers" if path.suffix == ".toml" else "mcpServers")
    entry = servers.get(server) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return None
    env = entry.get("env")
    return {"command": entry.get("command"), "args": list(entry.get("args") or []),
            "env": dict(env) if isinstance(env, dict) else {}}
