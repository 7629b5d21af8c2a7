"""Registering `brain serve --surface starter` as an MCP server with a harness:
the harness's own `mcp add` command, and the config block to paste by hand
when that command is not installed (each harness's forms: harnesses.py)."""

from __future__ import annotations

from .harnesses import HARNESSES, harness

MCP_NAME = "brain"
MCP_SERVER_ARGS = ["serve", "--surface", "starter"]
MCP_HOSTS = tuple(HARNESSES)  # registered through their own CLI; the others by file (mcp_files)


def mcp_add_argv(name: str, program: list[str], scope: str = "user", env: dict | None = None) -> list[str]:
    """The harness's own command that registers our MCP server, with the environment
    brain needs (carried_env) in the harness's own form."""
    return harness(name).mcp_add(MCP_NAME, [*program, *MCP_SERVER_ARGS], scope, env or {})


def mcp_config_block(name: str, program: list[str], env: dict | None = None) -> str:
    """What to paste by hand when the harness's CLI is not installed."""
    return harness(name).mcp_block(MCP_NAME, [*program, *MCP_SERVER_ARGS], env or {})


def remote_add_argv(name: str, remote: str, url: str, program: list[str]) -> list[str]:
    """Register the remote brain `remote`: Claude Code speaks Streamable HTTP to its URL,
    Codex runs the stdio relay `brain serve --remote NAME`."""
    return harness(name).remote_add(remote, url, program)
