"""Harness integration commands: `brain hook session-start` (what a harness
runs), `brain hooks install|uninstall claude|codex`, `brain mcp install|uninstall
claude|codex|opencode|cursor|vscode|gemini` (`brain doctor hooks` is in
hooks_doctor; the uninstall in mcp_uninstall).

`brain hook session-start` normally never reaches this module: `entry.py`
sends it straight to `hooks.session_start` so a harness does not wait for
typer to load. It is registered here too so `--help` lists it.
"""

from __future__ import annotations

import os
import shlex

import typer

from ..hooks.carried_env import carried_env
from ..hooks.harnesses import HARNESSES
from ..hooks.mcp_files import FILE_HOSTS
from . import completion, route
from .harness_run import file_scope_refused, run_harness, show_plan
from .hooks_doctor import deadline_ms as _deadline_ms  # importing it registers `brain doctor hooks`


def _one_of(names) -> str:
    names = list(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


HARNESS_HELP = " or ".join(f"{h.name} ({h.label})" for h in HARNESSES.values())
MCP_HOST_HELP = _one_of([*HARNESSES, *FILE_HOSTS])
SCOPE_HELP = ("user: every project (default); project: this repository's shared config; local: this "
              "repository, only you (claude only). codex takes user only")


def _harness(name: str) -> str:
    if name not in HARNESSES:
        typer.echo(f"error: unknown harness {name!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(HARNESSES)}.", err=True)
        raise typer.Exit(2)
    return name


def hooks_install(harness: str, project: bool, dry_run: bool) -> int:
    """Add our SessionStart (and for Codex, PostCompact) hook; idempotent."""
    from ..hooks import install as inst

    target = HARNESSES[harness].target(project)
    command = inst.hook_command(env=carried_env(os.environ))
    try:
        changes, warnings = inst.plan_install(target, command, inst.hook_timeout(_deadline_ms(route.load_config())))
    except inst.InstallError as e:
        typer.echo(f"error: {e}", err=True)
        return 1
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    if not changes:
        typer.echo(f"already installed: {target.hooks_file} runs `{command}`; nothing to do.")
        return 0
    show_plan(changes, dry_run)
    if not dry_run:
        typer.echo(HARNESSES[harness].installed_note)
        typer.echo("Check the whole chain with `brain doctor hooks`.")
    return 0


def hooks_uninstall(harness: str, project: bool, dry_run: bool) -> int:
    """Remove only our hook; original bytes come back when nothing else changed."""
    from ..hooks import install as inst

    target = HARNESSES[harness].target(project)
    try:
        changes, notes = inst.plan_uninstall(target)
    except inst.InstallError as e:
        typer.echo(f"error: {e}", err=True)
        return 1
    for n in notes:
        typer.echo(f"note: {n}")
    if not changes:
        typer.echo(f"not installed: {target.hooks_file} does not run `brain hook session-start`; nothing to do.")
        return 0
    show_plan(changes, dry_run)
    return 0


def mcp_file_install(name: str, scope: str, dry_run: bool, remote: str | None = None) -> int:
    """Register with a host that reads its MCP servers from a JSON file: brain
    itself, or with `remote` the stdio relay to that remote brain, under its name
    (the host's file then holds a command, never the remote's token)."""
    from ..hooks import install as inst
    from ..hooks import mcp_files
    from ..hooks import mcp_register as mcp

    host = mcp_files.FILE_HOSTS[name]
    if file_scope_refused(host, scope):
        return 2
    args, entry = (["serve", "--remote", remote], remote) if remote else (list(mcp.MCP_SERVER_ARGS), mcp.MCP_NAME)
    what = f"the relay to {remote!r}" if remote else "brain"
    try:
        changes = mcp_files.plan(host, scope, [*inst.brain_program(), *args], name=entry,
                                 env=carried_env(os.environ))
    except inst.InstallError as e:
        typer.echo(f"error: {e}", err=True)
        return 1
    if not changes:
        typer.echo(f"already registered: {host.path(scope)} starts {what}; nothing to do.")
        return 0
    show_plan(changes, dry_run)
    if not dry_run:
        typer.echo(f"{host.label} starts {what} with its next session (reload the window or restart it).")
    return 0


def mcp_install(harness: str, scope: str, dry_run: bool) -> int:
    """Register `brain serve --surface starter`: with the harness's own CLI (claude,
    codex; the command and config block are printed when that CLI is not
    installed), or by editing the host's JSON config (the others)."""
    from ..hooks import install as inst
    from ..hooks import mcp_register as mcp

    if harness in FILE_HOSTS:
        return mcp_file_install(harness, scope, dry_run)
    h = HARNESSES[harness]
    if scope not in h.mcp_scopes:
        only = "your user only" if h.mcp_scopes == ("user",) else f"the scopes {_one_of(h.mcp_scopes)} only"
        typer.echo(f"error: {h.name} registers MCP servers for {only} (in {h.mcp_file(os.environ)}); "
                   f"--scope {scope} cannot be honoured.", err=True)
        typer.echo(f"fix: run `brain mcp install {h.name}` without --scope (or with --scope user).", err=True)
        return 2
    program = inst.brain_program()
    env = carried_env(os.environ)
    argv = mcp.mcp_add_argv(harness, program, scope, env)
    from ..hooks.mcp_registered import registered

    ours = {"command": program[0], "args": [*program[1:], *mcp.MCP_SERVER_ARGS], "env": env}
    current = registered(harness, scope, mcp.MCP_NAME, os.environ)
    if current == ours:
        typer.echo(f"already registered: {h.mcp_file(os.environ)} starts brain; nothing to do.")
        return 0
    # an older entry (another brain, or BRAIN_HOME set since) is replaced: its CLI refuses a second add
    remove = shlex.split(h.mcp_remove(mcp.MCP_NAME, scope)) if current is not None else None
    exe = h.find_program()
    if dry_run or exe is None:
        if exe is None:
            typer.echo(f"`{argv[0]}` is not on PATH, so nothing was registered. Run this once it is:")
        else:
            typer.echo("dry run: would run")
        if remove:
            typer.echo(f"  {shlex.join(remove)}")
        typer.echo(f"  {shlex.join(argv)}")
        typer.echo("or add this to the harness's config by hand:")
        typer.echo(mcp.mcp_config_block(harness, program, env), nl=False)
        if exe is None:  # nothing was registered: a script must not take this for success
            typer.echo(f"error: `{argv[0]}` is not on PATH; brain is not registered with {harness}.", err=True)
            typer.echo(f"fix: install {argv[0]} (or put it on PATH) and run `brain mcp install {harness}` again, "
                       "or add the block above to its config by hand.", err=True)
            return 1
        return 0
    if remove:
        r = run_harness(exe, remove, f"{remove[0]} mcp remove")
        if r is None or r.returncode != 0:
            return 1
    r = run_harness(exe, argv, f"{argv[0]} mcp add")
    if r is None:
        return 1
    if r.returncode != 0:
        again = h.mcp_remove(mcp.MCP_NAME, scope)
        typer.echo(f"fix: if brain is already registered, remove it first (`{again}`) and run this again.", err=True)
        return r.returncode
    return 0


# -- registration --------------------------------------------------------------


_HARNESS_ARG = typer.Argument(..., metavar="HARNESS", help=HARNESS_HELP, autocompletion=completion.harnesses)
_HOST_ARG = typer.Argument(..., metavar="HOST", help=MCP_HOST_HELP, autocompletion=completion.mcp_hosts)


def register(app: typer.Typer) -> None:
    hook_app = typer.Typer(help="Commands a harness runs from its hook config (not for typing).",
                           no_args_is_help=True)

    @hook_app.command("session-start")
    def session_start_cmd(no_daemon: bool = typer.Option(False, "--no-daemon",
                                                         help="run the engine in this process")):
        """Read a SessionStart/PostCompact hook payload on stdin; print the context pack as additionalContext.
        Prints nothing and exits 0 on any failure (the reason goes to hooks.log in the brain log folder)."""
        from ..hooks.session_start import main

        raise typer.Exit(main(["--no-daemon"] if no_daemon else []))

    app.add_typer(hook_app, name="hook")

    hooks_app = typer.Typer(help="Install the session-start hook into Claude Code or Codex.", no_args_is_help=True)

    @hooks_app.command("install")
    def install_cmd(harness: str = _HARNESS_ARG,
                    project: bool = typer.Option(False, "--project", help="this repository's config, not your user config"),
                    dry_run: bool = typer.Option(False, "--dry-run", help="print the diff; write nothing")):
        """Add `brain hook session-start` to the harness's hooks (idempotent; backs the file up first)."""
        raise typer.Exit(hooks_install(_harness(harness), project, dry_run))

    @hooks_app.command("uninstall")
    def uninstall_cmd(harness: str = _HARNESS_ARG,
                      project: bool = typer.Option(False, "--project", help="this repository's config, not your user config"),
                      dry_run: bool = typer.Option(False, "--dry-run", help="print the diff; write nothing")):
        """Remove only our hook (the file's original bytes come back when nothing else changed)."""
        raise typer.Exit(hooks_uninstall(_harness(harness), project, dry_run))

    app.add_typer(hooks_app, name="hooks")

    mcp_app = typer.Typer(help="Register brain as an MCP server with a harness.", no_args_is_help=True)

    @mcp_app.command("install")
    def mcp_install_cmd(harness: str = _HOST_ARG,
                        scope: str = typer.Option("user", "--scope", help=SCOPE_HELP, autocompletion=completion.scopes),
                        dry_run: bool = typer.Option(False, "--dry-run", help="print the command or diff; change nothing")):
        """Register `brain serve --surface starter` as an MCP server (runs `claude mcp add` / `codex mcp add`;
        edits the JSON config of opencode, Cursor, VS Code and Gemini CLI)."""
        if harness not in (*HARNESSES, *FILE_HOSTS):
            typer.echo(f"error: unknown MCP host {harness!r}.", err=True)
            typer.echo(f"fix: use one of {MCP_HOST_HELP}.", err=True)
            raise typer.Exit(2)
        if scope not in ("user", "project", "local"):
            typer.echo(f"error: unknown scope {scope!r}.", err=True)
            typer.echo("fix: use --scope user, project or local.", err=True)
            raise typer.Exit(2)
        raise typer.Exit(mcp_install(harness, scope, dry_run))

    @mcp_app.command("uninstall")
    def mcp_uninstall_cmd(harness: str = _HOST_ARG,
                          scope: str = typer.Option("user", "--scope", help=SCOPE_HELP,
                                                    autocompletion=completion.scopes),
                          dry_run: bool = typer.Option(False, "--dry-run",
                                                       help="print the command or diff; change nothing")):
        """Undo `brain mcp install HOST`: runs `claude mcp remove` / `codex mcp remove`; takes only brain's
        entry out of the JSON config of opencode, Cursor, VS Code and Gemini CLI (the other servers stay)."""
        from .mcp_uninstall import mcp_uninstall

        if harness not in (*HARNESSES, *FILE_HOSTS):
            typer.echo(f"error: unknown MCP host {harness!r}.", err=True)
            typer.echo(f"fix: use one of {MCP_HOST_HELP}.", err=True)
            raise typer.Exit(2)
        raise typer.Exit(mcp_uninstall(harness, scope, dry_run))

    app.add_typer(mcp_app, name="mcp")
