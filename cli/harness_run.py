"""Running a harness's own CLI (`claude mcp add …`, `codex mcp remove …`) where the user sees it."""

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
