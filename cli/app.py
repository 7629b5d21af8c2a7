"""The typer app: every `brain` command, with help.

The hot verb commands are listed here for `--help` but run through the lean
path in `fast.py`. Feature areas register their own commands from their own
modules (`register(app)`), so this file stays a table of contents.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from . import backend


class _BrainApp(typer.Typer):
    """The typer app with a last line of defence: no Python traceback reaches the user.

    A command that fails in a way it did not foresee prints one error line and
    a fix, and exits 1; BRAIN_DEBUG=1 re-raises so a developer sees the stack.
    """

    def __call__(self, *args, **kwargs):
        from ..daemon.config import ConfigError

        try:
            return super().__call__(*args, **kwargs)
        except (SystemExit, KeyboardInterrupt):
            raise
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
    add_completion=False,
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
def init(path: Optional[Path] = typer.Argument(None, metavar="PATH", help="The vault folder (created if absent). Default: the current folder."),
         no_daemon: bool = typer.Option(False, "--no-daemon", help="only register the folder; start no daemon")):
    """Register a folder of Markdown notes as the vault, start its daemon and build the index."""
    from .init_cmd import run_init

    raise typer.Exit(run_init(path, start=not no_daemon))


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
def config_get(key: str = typer.Argument(..., metavar="KEY", help="a setting, e.g. hooks.budget_tokens")):
    """Print one setting."""
    from ..daemon import config as config_mod

    cfg = backend.load_config()
    if key not in config_mod.DEFAULTS and key not in cfg:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    typer.echo(_shown(config_mod.get(cfg, key)))


# ignore_unknown_options: a negative number is a value to check, not an unknown option
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set(key: str = typer.Argument(..., metavar="KEY", help="a setting, e.g. hooks.budget_tokens"),
               value: str = typer.Argument(..., metavar="VALUE", help="its new value; lists are comma-separated")):
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
    p = backend.places()
    cfg = config_mod.load(p.config_file)
    cfg[key] = v
    config_mod.save(p.config_file, cfg)
    typer.echo(f"{key} = {_shown(v)}")


@config_app.command("unset")
def config_unset(key: str = typer.Argument(..., metavar="KEY", help="the setting to restore")):
    """Remove one setting from config.toml, so its default applies again."""
    from ..daemon import config as config_mod

    if key not in config_mod.DEFAULTS:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    p = backend.places()
    cfg = config_mod.load(p.config_file)
    if key in cfg:
        del cfg[key]
        config_mod.save(p.config_file, cfg)
    typer.echo(f"{key} = {_shown(config_mod.get(cfg, key))} (the default)")


@config_app.command("list")
def config_list():
    """Print every setting and its value."""
    from ..daemon import config as config_mod

    cfg = backend.load_config()
    for key in sorted(set(config_mod.DEFAULTS) | set(cfg)):
        typer.echo(f"{key} = {_shown(config_mod.get(cfg, key))}")


_COMMON = ("--json               print the exact response envelope (JSON)\n"
           "--no-daemon          run in this process, not through the daemon\n"
           "--remote NAME        ask the remote brain NAME instead (brain connect --list)")

# name -> (usage after `brain NAME`, one-line summary, option lines); the lean
# parser in fast.py does the parsing, this only documents it for `--help`
_HOT_HELP: dict[str, tuple[str, str, str]] = {
    "remember": ("FACT --provenance P [OPTIONS]", "Save one fact.",
                 "FACT                 the claim, one sentence, in quotes\n"
                 "--provenance, -p P   who or what said it (required), e.g. user\n"
                 "--entity, -e E       who or what it is about: people/alice, or a name\n"
                 "--kind, -k K         event|preference|commitment|belief|fact (default)\n"
                 "--visibility V       world (default; every agent) or private (CLI only)\n"
                 "--ttl T              expire after 30d, 12h, 45m, 90s, or at an ISO time"),
    "recall": ("[QUERY] [OPTIONS]", "Read facts; with QUERY, search the pages too.",
               "QUERY                words to search the pages for (facts: the most recent)\n"
               "--entity, -e E       facts about one entity (slug or name)\n"
               "--since S            since 2026-06-12, 2d, \"8 hours ago\" (not with --entity)\n"
               "--session ID         facts saved in one agent session\n"
               "--limit N            at most N facts and N pages (1-100; default 50)\n"
               "--budget N           pack the answer into about N tokens (N > 0)\n"
               "--grep G             keep only facts containing G (any case)\n"
               "--include-expired    also show forgotten and expired facts\n"
               "--supersessions      show facts replaced by newer ones"),
    "forget": ("ID [--reason R]", "Expire a fact (it stays in facts.jsonl as an audit record).",
               "ID                   the number remember printed, or #id from recall\n"
               "--reason R           why, kept with the record"),
    "entity": ("NAME", "Show one entity card: aliases, summary, open threads, edges, counts.",
               "NAME                 a slug (people/alice), a title or an alias (Alice)"),
    "context": ("ENTITIES [OPTIONS]", "Print the context pack a session-start hook injects.",
                "ENTITIES             comma-separated slugs or names (at most 8)\n"
                "--budget N           pack into about N tokens (N > 0)\n"
                "--since S            only open-thread events after this ISO date\n"
                "--session ID         the agent session asking (picks its hot facts)\n"
                "--private            include private facts and pages"),
    "delta": ("(--since S | --session ID) [OPTIONS]", "What changed since a cursor: pages, facts, open-thread events.",
              "--since S            an ISO date or time, e.g. 2026-06-12 (1970-01-01: all)\n"
              "--since-slug SLUG    resume after this page (the slug a run printed)\n"
              "--session ID         a named cursor: each run shows changes since the last\n"
              "--entities E         open-thread events of these entities only\n"
              "--budget N           pack into about N tokens (N > 0)\n"
              "--private            include private facts and pages"),
    "call": ("VERB ['JSON']", "Call any tool with JSON arguments and print the raw envelope.",
             "VERB                 a tool name: recall, remember, context_pack, status, ...\n"
             "JSON                 one JSON object, e.g. '{\"entity\": \"people/me\"}'\n"
             "--no-daemon          run in this process, not through the daemon\n"
             "--remote NAME        ask the remote brain NAME instead (brain connect --list)"),
}


def _hot(name: str):
    usage, summary, options = _HOT_HELP[name]
    if name != "call":
        options += "\n" + _COMMON
    help_text = f"{summary}\n\n\b\n{options}"

    @app.command(name, help=help_text, short_help=summary, options_metavar=usage,
                 context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _cmd(ctx: typer.Context):
        from .fast import run

        raise typer.Exit(run([name] + list(ctx.args)))

    return _cmd


for _verb in _HOT_HELP:
    _hot(_verb)

# feature areas that add commands of their own
_AREAS = ("doctor", "demo_cmd", "index_cmd", "daemon_cmd", "protocol_cmd", "hooks_cmd", "synth_cmd", "auth_cmd",
          "connect_cmd")
for _name in _AREAS:
    if importlib.util.find_spec(f"{__package__}.{_name}") is not None:
        importlib.import_module(f"{__package__}.{_name}").register(app)
