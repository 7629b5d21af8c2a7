"""`brain mcp uninstall HOST`: undo exactly what `brain mcp install HOST` did.

Claude Code and Codex registered brain through their own CLI, so their own
`mcp remove` takes it out; the JSON-file hosts lose only brain's member of
their servers object, every other byte of the file kept (backed up first,
as the install does). Nothing registered is nothing to do, exit 0.
"""

from __future__ import annotations

import os
import shlex

import typer

from ..hooks.harnesses import HARNESSES
from .harness_run import file_scope_refused, run_harness, show_plan
from ..hooks.mcp_files import FILE_HOSTS


def mcp_uninstall(name: str, scope: str, dry_run: bool) -> int:
    if name in FILE_HOSTS:
        return _file_uninstall(name, scope, dry_run)
    return _cli_uninstall(name, scope, dry_run)


def _file_uninstall(name: str, scope: str, dry_run: bool) -> int:
    from ..hooks import install as inst
    from ..hooks import mcp_files

    host = FILE_HOSTS[name]
    if file_scope_refused(host, scope):
        return 2
    try:
        changes = mcp_files.unplan(host, scope)
    except inst.InstallError as e:
        typer.echo(f"error: {e}", err=True)
        return 1
    if not changes:
        typer.echo(f"not registered: {host.path(scope)} does not start brain; nothing to do.")
        return 0
    show_plan(changes, dry_run)  # backed up first, as the install is
    if dry_run:
        return 0
    typer.echo(f"{host.label} no longer starts brain from its next session.")
    return 0


def _cli_uninstall(name: str, scope: str, dry_run: bool) -> int:
    from ..hooks import mcp_register as mcp
    from ..hooks.mcp_registered import registered

    h = HARNESSES[name]
    if scope not in h.mcp_scopes:
        typer.echo(f"error: {h.label} has no {scope} scope for MCP servers.", err=True)
        typer.echo(f"fix: run `brain mcp uninstall {name}` without --scope.", err=True)
        return 2
    command = h.mcp_remove(mcp.MCP_NAME, scope)
    if scope == "user" and h.mcp_file(os.environ).exists() and \
            registered(name, scope, mcp.MCP_NAME, os.environ) is None:
        typer.echo(f"not registered: {h.mcp_file(os.environ)} does not start brain; nothing to do.")
        return 0
    exe = h.find_program()
    if dry_run:
        typer.echo(f"dry run: would run\n  {command}")
        return 0
    if exe is None:
        typer.echo(f"error: `{h.program}` is not on PATH; brain was not removed from {h.label}.", err=True)
        typer.echo(f"fix: run `{command}` where {h.program} is installed, or delete the `brain` server from "
                   f"{h.mcp_file(os.environ)} by hand.", err=True)
        return 1
    r = run_harness(exe, shlex.split(command), command)
    if r is None:
        return 1
    return r.returncode
