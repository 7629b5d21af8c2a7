"""The typer app: every `brain` command, with help and shell completion.

The verb commands are declared once, in `verb_commands.py`; here they become click
commands so `--help` and completion know their options, while `entry.py`
runs them on the lean path in `verb_main.py`. Feature areas register their own
commands from their own modules (`register(app)`), so this file stays a
table of contents.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:  # typer brings click; named here for the annotations only
    import click

from . import completion, route


class _BrainApp(typer.Typer):
    """The typer app with a last line of defence: no Python traceback reaches the user.

    A command that fails in a way it did not foresee prints one error line and
    a fix, and exits 1; BRAIN_DEBUG=1 re-raises so a developer sees the stack.
    """

    def __call__(self, *args, **kwargs):
        from ..daemon.config import ConfigError

        import click

        try:
            return brain_command()(*args, **kwargs)
        except (SystemExit, KeyboardInterrupt, BrokenPipeError):
            raise
        except click.exceptions.Exit as e:  # raised by completion's eager options
            raise SystemExit(e.exit_code) from None
        except Exception as e:
            if os.environ.get("BRAIN_DEBUG"):
                raise
            if isinstance(e, ConfigError):
                message, _, fix = str(e).partition(" fix: ")
            elif isinstance(e, OSError):
                message = f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
                fix = ("check that the path exists, is a folder or a file as expected and is yours to read and "
                       "write; `brain doctor` checks the whole setup")
            else:
                message = f"unexpected {e.__class__.__name__}: {e}"
                fix = ("this is a bug in brain: run the command again with BRAIN_DEBUG=1 to see where it "
                       "failed, and report it; `brain doctor` checks the setup meanwhile")
            print(f"error: {message}", file=sys.stderr)
            if fix:
                print(f"fix: {fix}", file=sys.stderr)
            raise SystemExit(1) from None


app = _BrainApp(
    help="brain — a local-first memory server for AI agents over a folder of Markdown notes.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"brain {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                       help="Print brain's version and exit.")):
    """Options for every command (the app's help text says what brain is)."""


@app.command()
def init(path: Optional[Path] = typer.Argument(None, metavar="PATH", help="The vault folder. Absent: asks on a "
                                              "terminal before making it, refuses elsewhere unless --create. "
                                              "Left out: on a terminal, asks whether to register the current folder."),
         no_daemon: bool = typer.Option(False, "--no-daemon", help="only register the folder; start no daemon"),
         create: bool = typer.Option(False, "--create", help="make PATH when it does not exist, without asking")):
    """Register a folder of Markdown notes as the vault, start its daemon and build the index."""
    from .init_cmd import run_init

    raise typer.Exit(run_init(path, start=not no_daemon, create=create))


config_app = typer.Typer(help="Read and change settings (config.toml).", no_args_is_help=True)


def _shown(value) -> str:
    """A setting as `brain config set` takes it: lists comma-separated, booleans true/false."""
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)
app.add_typer(config_app, name="config")


@config_app.command("get")
def config_get(key: str = typer.Argument(..., metavar="KEY", help="a setting, e.g. hooks.budget_tokens",
                                         autocompletion=completion.setting_names)):
    """Print one setting."""
    from ..daemon import config as config_mod

    cfg = route.load_config()
    if key not in config_mod.DEFAULTS and key not in cfg:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    typer.echo(_shown(config_mod.get(cfg, key)))


# ignore_unknown_options: a negative number is a value to check, not an unknown option
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set(key: str = typer.Argument(..., metavar="KEY", help="a setting, e.g. hooks.budget_tokens",
                                         autocompletion=completion.setting_names),
               value: str = typer.Argument(..., metavar="VALUE", help="its new value; lists are comma-separated",
                                           autocompletion=completion.setting_values)):
    """Change one setting (e.g. `brain config set mcp_surface verbs`); `brain config unset KEY` restores the default."""
    from ..daemon import config as config_mod

    if key not in config_mod.DEFAULTS:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    try:
        v = config_mod.coerce(key, value)
    except ValueError as e:
        typer.echo(f"error: {e}", err=True)
        typer.echo(f"fix: run `brain config set {key} VALUE` with a value it accepts; the README's Settings table "
                   "lists each one", err=True)
        raise typer.Exit(1)
    p = route.places()
    cfg = config_mod.load(p.config_file)
    cfg[key] = v
    config_mod.save(p.config_file, cfg)
    typer.echo(f"{key} = {_shown(v)}")


@config_app.command("unset")
def config_unset(key: str = typer.Argument(..., metavar="KEY", help="the setting to restore",
                                           autocompletion=completion.setting_names)):
    """Remove one setting from config.toml, so its default applies again."""
    from ..daemon import config as config_mod

    if key not in config_mod.DEFAULTS:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    p = route.places()
    cfg = config_mod.load(p.config_file)
    if key in cfg:
        del cfg[key]
        config_mod.save(p.config_file, cfg)
    typer.echo(f"{key} = {_shown(config_mod.get(cfg, key))} (the default)")


@config_app.command("list")
def config_list():
    """Print every setting and its value."""
    from ..daemon import config as config_mod

    cfg = route.load_config()
    for key in sorted(set(config_mod.DEFAULTS) | set(cfg)):
        typer.echo(f"{key} = {_shown(config_mod.get(cfg, key))}")


# feature areas that add commands of their own
_AREAS = ("doctor", "demo_cmd", "index_cmd", "daemon_cmd", "protocol_cmd", "hooks_cmd", "synth_cmd", "auth_cmd",
          "connect_cmd", "facts_cmd")
for _name in _AREAS:
    if importlib.util.find_spec(f"{__package__}.{_name}") is not None:
        importlib.import_module(f"{__package__}.{_name}").register(app)


def click_command(cmd, run) -> click.Command:
    """The click command for a declared command (verb_commands.Command), for `--help` and
    shell completion; running it hands the raw arguments to `run` (the lean path)."""
    import click

    class _Lean(click.Command):
        def parse_args(self, ctx, args):
            ctx.meta["brain_argv"] = list(args)
            return super().parse_args(ctx, args)

    params: list[click.Parameter] = []
    args_help: list[str] = []
    for o in cmd.all_opts():
        help_ = cmd.help_of(o)
        if o.positional:
            metavar = o.dest.upper()
            optional = o.optional_positional
            params.append(click.Argument([o.dest], required=not optional,
                                         metavar=f"[{metavar}]" if optional else metavar))
            if help_:
                args_help.append(f"{metavar}  {help_}")
        elif o.kind == "flag":
            params.append(click.Option(list(o.names), is_flag=True, help=help_))
        else:
            choices = cmd.choices_of(o)
            kind = click.Choice(list(choices)) if choices else (int if o.kind == "int" else str)
            params.append(click.Option(list(o.names), type=kind, required=o.required, help=help_))

    def callback(**_):
        raise SystemExit(run(click.get_current_context().meta["brain_argv"]))

    summary = cmd.help_summary
    return _Lean(cmd.name, params=params, callback=callback, short_help=summary, options_metavar="[OPTIONS]",
                 help=summary + ("\n\n\b\n" + "\n".join(args_help) if args_help else ""))


def brain_command():
    """The whole command tree: the typer app plus the declared verb commands and `brain serve`."""
    from typer.main import get_command

    from .daemon_cmd import SERVE, serve_main
    from .verb_commands import COMMANDS
    from .verb_main import run

    group = get_command(app)
    for cmd in (*COMMANDS.values(), SERVE):
        runs = serve_main if cmd is SERVE else (lambda argv, name=cmd.name: run([name, *argv]))
        group.add_command(click_command(cmd, runs), cmd.name)
    return group


def run_app(argv: list[str]) -> int:
    group = brain_command()
    if argv and not argv[0].startswith("-") and argv[0] not in group.commands:
        import difflib

        near = difflib.get_close_matches(argv[0], list(group.commands), n=1, cutoff=0.6)
        print(f"error: brain has no command {argv[0]!r}.", file=sys.stderr)
        print("fix: " + (f"did you mean `brain {near[0]}`? " if near else "") + "`brain --help` lists the commands",
              file=sys.stderr)
        return 2
    try:
        app(args=argv, prog_name="brain", standalone_mode=True)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return 0
