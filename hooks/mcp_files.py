"""MCP hosts registered by editing their JSON config file: opencode, Cursor,
VS Code and Gemini CLI (the formats, with where each file lives, are in
docs/harnesses.md).

Each host has a user file and a project file, and keeps its servers in one
object of that file; our entry is one member of it, named `brain`. The edit
is a text splice like the hook installers' (every other byte stays), backed
up to `<name>.bak` first.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from . import InstallError
from . import json_splice as js
from .install import Change, project_dir, read_text

MCP_NAME = "brain"
FILE_SCOPES = ("user", "project")


def _home(environ) -> Path:
    return Path(environ.get("HOME") or Path.home()).expanduser()


def _xdg_config(environ) -> Path:
    return Path(environ.get("XDG_CONFIG_HOME") or _home(environ) / ".config").expanduser()


def _vscode_user_dir(environ) -> Path:
    if sys.platform == "darwin":
        return _home(environ) / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return Path(environ.get("APPDATA") or _home(environ)) / "Code" / "User"
    return _xdg_config(environ) / "Code" / "User"


@dataclass(frozen=True)
class FileHost:
    name: str
    label: str
    user_file: Callable[[Mapping[str, str]], Path]
    project_file: str                      # relative to the project root
    servers_key: str                       # the object holding the servers
    entry: Callable[[list[str]], dict]     # our server entry, from the full argv

    def path(self, scope: str, cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
        env = os.environ if environ is None else environ
        if scope == "user":
            return self.user_file(env)
        return project_dir(cwd) / self.project_file


def _command_args(argv: list[str]) -> dict:
    return {"command": argv[0], "args": argv[1:]}


FILE_HOSTS: dict[str, FileHost] = {h.name: h for h in (
    FileHost("opencode", "opencode", lambda env: _xdg_config(env) / "opencode" / "opencode.json",
             "opencode.json", "mcp", lambda argv: {"type": "local", "command": argv}),
    FileHost("cursor", "Cursor", lambda env: _home(env) / ".cursor" / "mcp.json",
             ".cursor/mcp.json", "mcpServers", _command_args),
    FileHost("vscode", "VS Code", lambda env: _vscode_user_dir(env) / "mcp.json",
             ".vscode/mcp.json", "servers", lambda argv: {"type": "stdio", **_command_args(argv)}),
    FileHost("gemini", "Gemini CLI", lambda env: _home(env) / ".gemini" / "settings.json",
             ".gemini/settings.json", "mcpServers", _command_args),
)}


def _root(text: str, label: str) -> js.Node:
    try:
        root = js.parse(text)
    except ValueError as e:
        raise InstallError(f"{label} is not valid JSON, even allowing comments and trailing commas ({e}). "
                           "Fix it, or add the entry by hand (`--dry-run` prints it); nothing was changed.") \
            from None
    if root.kind != "object":
        raise InstallError(f"{label} must hold a JSON object; nothing was changed.")
    return root


def _servers(host: FileHost, text: str, root: js.Node, label: str) -> js.Node | None:
    """The object our entry goes in; opencode 2 nests servers under `mcp.servers`."""
    holder = root.get(host.servers_key)
    if holder is None:
        return None
    if holder.node.kind != "object":
        raise InstallError(f'"{host.servers_key}" in {label} is not an object; fix it by hand, nothing was changed.')
    nested = holder.node.get("servers") if host.name == "opencode" else None
    if nested is not None and nested.node.kind == "object":
        return nested.node
    return holder.node


def add_server(host: FileHost, text: str | None, argv: list[str], label: str = "the file",
               name: str = MCP_NAME) -> str:
    """`text` with our server entry `name` in it (replacing an older entry of that name).
    Comments and trailing commas (JSONC, as VS Code writes its files) stay as they are."""
    if text is None or not text.strip():
        text = "{}\n"
    try:
        blank = js.blank_comments(text)
    except ValueError as e:
        raise InstallError(f"{label} does not parse ({e}); fix it, nothing was changed.") from None
    edited = _add_to_plain(host, blank, host.entry(argv), label, name)
    try:
        return js.carry(text, blank, edited)
    except ValueError as e:
        raise InstallError(f"{label}: {e}; add the entry by hand (`--dry-run` prints it), nothing was changed.") \
            from None


def _add_to_plain(host: FileHost, text: str, entry: dict, label: str, name: str) -> str:
    root = _root(text, label)
    servers = _servers(host, text, root, label)
    if servers is None:
        return js.add_member(text, root, host.servers_key, {name: entry})
    ours = servers.get(name)
    if ours is None:
        return js.add_member(text, servers, name, entry)
    if js.value_of(text, ours.node) == entry:
        return text
    return js.replace_value(text, ours.node, entry)  # only our entry's value changes


def plan(host: FileHost, scope: str, argv: list[str], cwd: Path | None = None, environ=None,
         name: str = MCP_NAME) -> list[Change]:
    """The edit that registers `argv` as the server `name` (brain itself by default;
    a remote brain is registered under its own name, beside it)."""
    path = host.path(scope, cwd, environ)
    old = read_text(path)
    new = add_server(host, old, argv, str(path), name)
    if new == old:
        return []
    what = "brain" if name == MCP_NAME else f"the remote brain {name!r}"
    return [Change(path, old, new, f"register {what} with {host.label} in {path}")]


def remove_server(host: FileHost, text: str | None, label: str = "the file", name: str = MCP_NAME) -> str | None:
    """`text` without our server entry `name` (every other byte as it was), or None when
    the file holds no such entry. An emptied servers object stays: the user may have made it."""
    if text is None or not text.strip():
        return None
    try:
        blank = js.blank_comments(text)
    except ValueError as e:
        raise InstallError(f"{label} does not parse ({e}); fix it, nothing was changed.") from None
    root = _root(blank, label)
    servers = _servers(host, blank, root, label)
    if servers is None or servers.get(name) is None:
        return None
    try:
        return js.carry(text, blank, js.remove_member(blank, servers, name))
    except ValueError as e:
        raise InstallError(f"{label}: {e}; remove the entry by hand, nothing was changed.") from None


def unplan(host: FileHost, scope: str, cwd: Path | None = None, environ=None) -> list[Change]:
    """The edit that takes brain's entry out of the host's file ([] when it holds none)."""
    path = host.path(scope, cwd, environ)
    old = read_text(path)
    new = remove_server(host, old, str(path))
    if new is None or new == old:
        return []
    return [Change(path, old, new, f"remove brain from {host.label}'s servers in {path}")]
