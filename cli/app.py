"""The typer app: every `brain` command, with help.

The hot verb commands are listed here for `--help` but run through the lean
path in `fast.py`. Feature areas register their own commands from their own
modules (`register(app)`), so this file stays a table of contents.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Optional

import typer

from . import backend

app = typer.Typer(
    help="brain — a local-first memory server for AI agents over a folder of Markdown notes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def init(path: Optional[Path] = typer.Argument(None, help="The vault folder (created if absent). Default: the current folder.")):
    """Register a folder of Markdown notes as the vault and write the config."""
    from ..daemon import config as config_mod
    from ..daemon.protocol import now_iso

    p = backend.places()
    vault = (path or Path.cwd()).expanduser().resolve()
    if vault.exists() and not vault.is_dir():
        typer.echo(f"error: {vault} is a file, not a folder.", err=True)
        typer.echo("fix: pass a folder (it is created if it does not exist).", err=True)
        raise typer.Exit(1)
    (vault / ".brain").mkdir(parents=True, exist_ok=True)
    cfg = config_mod.load(p.config_file)
    cfg["vault"] = str(vault)
    cfg.setdefault("protocol_installed_at", now_iso())
    config_mod.save(p.config_file, cfg)
    pages = sum(1 for _ in vault.rglob("*.md"))
    typer.echo(f"vault: {vault}  ({pages} Markdown files)")
    typer.echo(f"config: {p.config_file}")
    typer.echo("Facts are world-visible to every agent connected to this brain unless saved with --visibility private.")


config_app = typer.Typer(help="Read and change settings (config.toml).", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("get")
def config_get(key: str):
    """Print one setting."""
    from ..daemon import config as config_mod

    cfg = backend.load_config()
    if key not in config_mod.DEFAULTS and key not in cfg:
        typer.echo(f"error: unknown setting {key!r}. Known: {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    typer.echo(config_mod.get(cfg, key))


@config_app.command("set")
def config_set(key: str, value: str):
    """Change one setting (e.g. `brain config set mcp_surface verbs`)."""
    from ..daemon import config as config_mod

    if key not in config_mod.DEFAULTS:
        typer.echo(f"error: unknown setting {key!r}.", err=True)
        typer.echo(f"fix: use one of {', '.join(sorted(config_mod.DEFAULTS))}", err=True)
        raise typer.Exit(1)
    try:
        v = config_mod.coerce(key, value)
    except ValueError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)
    p = backend.places()
    cfg = config_mod.load(p.config_file)
    cfg[key] = v
    config_mod.save(p.config_file, cfg)
    typer.echo(f"{key} = {v!r}")


@config_app.command("list")
def config_list():
    """Print every setting and its value."""
    from ..daemon import config as config_mod

    cfg = backend.load_config()
    for key in sorted(set(config_mod.DEFAULTS) | set(cfg)):
        typer.echo(f"{key} = {config_mod.get(cfg, key)!r}")


def _hot(name: str, help_text: str):
    @app.command(name, help=help_text, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _cmd(ctx: typer.Context):
        from .fast import run

        raise typer.Exit(run([name] + list(ctx.args)))

    return _cmd


_hot("remember", "Save one fact: brain remember FACT --provenance P [--entity E] [--kind K] [--visibility world|private] [--ttl 30d] [--json].")
_hot("recall", "Read facts and search pages: brain recall [QUERY] [--entity E] [--since S] [--limit N] [--budget N] [--grep G] [--json].")
_hot("forget", "Expire a fact: brain forget ID [--reason R] [--json].")
_hot("entity", "Show one entity card: brain entity NAME [--json].")
_hot("context", "Print a context pack: brain context 'a,b' [--budget N] [--since S] [--session ID] [--private] [--json].")
_hot("delta", "What changed: brain delta [--since S] [--session ID] [--entities E] [--budget N] [--json].")
_hot("call", "Call any tool with JSON arguments and print the raw envelope: brain call VERB '{...}'.")

# feature areas that add commands of their own
_AREAS = ("doctor", "demo_cmd", "index_cmd", "daemon_cmd", "protocol_cmd", "hooks_cmd", "synth_cmd", "auth_cmd")
for _name in _AREAS:
    if importlib.util.find_spec(f"{__package__}.{_name}") is not None:
        importlib.import_module(f"{__package__}.{_name}").register(app)
