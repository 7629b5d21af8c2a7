"""Registering `brain serve --surface starter` as an MCP server with a harness:
the harness's own `mcp add` command, and the config block to paste by hand
when that command is not installed."""

from __future__ import annotations

import json

from . import InstallError
from .install import HARNESSES, codex_home

MCP_NAME = "brain"
MCP_SERVER_ARGS = ["serve", "--surface", "starter"]
MCP_HOSTS = HARNESSES  # registered through their own CLI; the others by file (mcp_files)


def mcp_add_argv(harness: str, program: list[str], scope: str = "user") -> list[str]:
    """The harness's own command that registers our MCP server."""
    server = [*program, *MCP_SERVER_ARGS]
    if harness == "claude":
        return ["claude", "mcp", "add", "--scope", scope, MCP_NAME, "--", *server]
    if harness == "codex":
        return ["codex", "mcp", "add", MCP_NAME, "--", *server]
    raise InstallError(f"unknown harness {harness!r}: use one of {', '.join(HARNESSES)}")


def mcp_config_block(harness: str, program: list[str]) -> str:
    """What to paste by hand when the harness's CLI is not installed."""
    command, args = program[0], [*program[1:], *MCP_SERVER_ARGS]
    if harness == "claude":
        block = {"mcpServers": {MCP_NAME: {"type": "stdio", "command": command, "args": args}}}
        return ("# in ~/.claude.json (every project) or .mcp.json at a project's root:\n"
                + json.dumps(block, indent=2) + "\n")
    toml_args = ", ".join(json.dumps(a) for a in args)
    return (f"# in {codex_home() / 'config.toml'}:\n"
            f"[mcp_servers.{MCP_NAME}]\ncommand = {json.dumps(command)}\nargs = [{toml_args}]\n")


def remote_add_argv(harness: str, name: str, url: str, program: list[str]) -> list[str]:
    """Register a remote brain. Claude Code speaks Streamable HTTP: the URL, with the token
    fetched at connection time by `brain connect --header NAME` (never written into its
    config). Codex gets the stdio relay `brain serve --remote NAME`."""
    if harness == "claude":
        spec = {"type": "http", "url": url, "headersHelper": " ".join([*program, "connect", "--header", name])}
        return ["claude", "mcp", "add-json", "--scope", "user", name, json.dumps(spec)]
    if harness == "codex":
        return ["codex", "mcp", "add", name, "--", *program, "serve", "--remote", name]
    raise InstallError(f"unknown harness {harness!r}: use one of {', '.join(HARNESSES)}")
