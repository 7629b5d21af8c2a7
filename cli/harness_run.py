"""What `brain mcp install` and `brain mcp uninstall` share: running a harness's own CLI (`claude mcp add
…`, `codex mcp remove …`) where the user sees it, a file host's scope, and a plan shown or applied."""

from __future__ import annotations

import shlex
import subprocess

import typer


def run_harness(exe: str, argv: list[str], what: str) -> "subprocess.CompletedProcess[str] | None":
    """Run a harness's own CLI (`claude mcp add …`) as the user would see it: the command, its output,
    its errors; None, after saying why, when it could not run at all."""
    typer.echo(f"$ {shlex.join(argv)}")
    try:
        r = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        typer.echo(f"error: {what} failed: {e}", err=True)
        return None
    if r.stdout:
        typer.echo(r.stdout, nl=False)
    if r.returncode != 0:
        typer.echo(r.stderr, err=True, nl=False)
    return r


def file_scope_refused(host, scope: str) -> bool:
    """Say so, and True, when a host that keeps its MCP servers in a file has no such scope."""
    from ..hooks.mcp_files import FILE_SCOPES

    if scope in FILE_SCOPES:
        return False
    typer.echo(f"error: {host.label} has no {scope} scope.", err=True)
    typer.echo("fix: use --scope user (every project) or --scope project (this repository).", err=True)
    return True


def show_plan(changes, dry_run: bool) -> None:
    """The changes as diffs (`dry_run`), or applied, each file backed up first."""
    from ..hooks import install as inst

    if dry_run:
        for ch in changes:
            typer.echo(inst.diff(ch), nl=False)
        typer.echo("dry run: nothing was written.")
        return
    for line in inst.apply(changes):
        typer.echo(line)
