"""`brain protocol`: the MEMORY_VERBS spec, the conformance runner, usage stats."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Optional

import typer  # loaded only by the typer app, never on the lean verb path

from . import route

SELF_LABEL = "self (stdio)"

CONFORMANCE_HELP = (
    "Certify a MEMORY_VERBS server: list its tools, run the protocol's cases, print pass / fail / skip "
    "per row and CONFORMANT or NOT CONFORMANT (exit status 0 only when conformant).\n\n"
    "--target takes a command (spawned and spoken to over stdio, e.g. \"brain serve --surface verbs\") "
    "or an http(s):// URL (Streamable HTTP; pass the bearer token with --token). Without --target it "
    "certifies this brain: it spawns `brain serve --surface full --no-daemon` over stdio in a throwaway "
    "vault and home folder, deleted afterwards.\n\n"
    "The run writes only artifacts named after its marker (run-<base36 time>): the page "
    "people/conformance-<marker> (when the target offers put_page), facts whose text carries the marker, "
    "and a delta session cursor named after it. Nothing else in the target brain is changed; those "
    "artifacts are left in place."
)


def _self_target(tmp: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment that serve a fresh, empty brain over stdio."""
    home, vault = tmp / "home", tmp / "vault"
    home.mkdir()
    vault.mkdir()
    env = dict(os.environ)
    env.update(BRAIN_HOME=str(home), BRAIN_VAULT=str(vault), HF_HUB_OFFLINE="1")
    argv = [sys.executable, "-m", "brain.cli.entry", "serve", "--surface", "full", "--no-daemon"]
    return argv, env


def _tail(path: Path, n: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def run_conformance(target: str | None, token: str | None, synthesize: bool, as_json: bool,
                    alternate_with: str | None = None) -> int:
    """Run the certification and print the report; returns the exit status."""
    import anyio

    from ..daemon.conformance import runner as cf

    marker = cf.new_marker()
    # short path: the served brain puts a Unix socket under its home
    with tempfile.TemporaryDirectory(prefix="brain-conf-", dir="/tmp" if Path("/tmp").is_dir() else None) as t:
        tmp = Path(t)
        stack = contextlib.ExitStack()
        errlog_path = tmp / "server-stderr.log"
        if alternate_with and not (target and target.startswith(("http://", "https://"))
                                   and alternate_with.startswith(("http://", "https://"))):
            print("error: --alternate-with takes a second http(s):// URL beside an http(s):// --target.",
                  file=sys.stderr)
            print("fix: pass both front ends' URLs, e.g. --target http://a:3131/mcp "
                  "--alternate-with http://b:3131/mcp", file=sys.stderr)
            return 2
        if target and target.startswith(("http://", "https://")):
            label = target if not alternate_with else f"{target} and {alternate_with}, in turn"
            second = alternate_with

            def connect():
                if second:
                    return cf.connect_alternating(lambda: cf.connect_http(target, token),
                                                  lambda: cf.connect_http(second, token))
                return cf.connect_http(target, token)
        else:
            if target:
                argv, env, label = shlex.split(target), dict(os.environ), target
                if not argv:
                    print("error: --target is empty.", file=sys.stderr)
                    print("fix: pass a command such as \"brain serve\" or an http(s):// URL.", file=sys.stderr)
                    return 2
            else:
                argv, env = _self_target(tmp)
                label = SELF_LABEL
            if token:
                print("note: --token is only sent to http(s) targets; ignoring it for a command.", file=sys.stderr)
            errlog = stack.enter_context(open(errlog_path, "w", encoding="utf-8"))

            def connect():
                return cf.connect_stdio(argv, env=env, errlog=errlog)

        report = anyio.run(lambda: cf.certify(connect, synthesize=synthesize, marker=marker))
        stack.close()
        server_log = _tail(errlog_path) if not report["ok"] else ""
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(cf.render_text(report, label, marker))
    if server_log:
        print("\nlast lines the server wrote to stderr:\n" + server_log, file=sys.stderr)
    return 0 if report["ok"] else 1


def register(app) -> None:
    protocol_app = typer.Typer(help="The MEMORY_VERBS v1 protocol: its spec, a conformance runner, usage stats.",
                               invoke_without_command=True)
    app.add_typer(protocol_app, name="protocol")

    @protocol_app.callback(invoke_without_command=True)
    def protocol(ctx: typer.Context,
                 json_out: bool = typer.Option(False, "--json", help="print the machine-readable spec")):
        """Print the protocol this server speaks, derived from its live tool definitions."""
        if ctx.invoked_subcommand is not None:
            return
        from ..daemon.protocol.document import build_document, render_text

        if json_out:
            typer.echo(json.dumps(build_document(), indent=2, ensure_ascii=False))
        else:
            typer.echo(render_text())

    @protocol_app.command("conformance", help=CONFORMANCE_HELP)
    def conformance(
        target: Optional[str] = typer.Option(None, "--target", help="a command to spawn over stdio, or an "
                                             "http(s):// URL; default: this brain in a throwaway vault"),
        token: Optional[str] = typer.Option(None, "--token", help="bearer token for an http(s) target"),
        synthesize: bool = typer.Option(False, "--synthesize", help="also run the synthesize case "
                                        "(calls the target's LLM: costs money)"),
        json_out: bool = typer.Option(False, "--json", help="print the report as JSON"),
        alternate_with: Optional[str] = typer.Option(
            None, "--alternate-with", metavar="URL", help="a second front end of the same brain: calls take "
            "turns between --target and it, so what one writes the other must read (docs/scaling.md)"),
    ):
        raise typer.Exit(run_conformance(target, token, synthesize, json_out, alternate_with))

    @protocol_app.command("stats")
    def stats(days: str = typer.Option("30", "--days", help="the window in days (default 30)"),
              json_out: bool = typer.Option(False, "--json", help="print the aggregates as JSON")):
        """Per-verb usage from the local usage log: calls, errors, latency, budget drops, entity hits."""
        try:
            from ..daemon.server.usage_stats import render_stats
        except ModuleNotFoundError as e:
            if e.name != f"{__package__.rpartition('.')[0]}.daemon.server.usage_stats":
                raise
            typer.echo("error: usage statistics are not part of this build (brain.daemon.server.usage_stats is missing).",
                       err=True)
            typer.echo("fix: reinstall brain (`pip install -e .`), or read usage.jsonl in the state dir directly.",
                       err=True)
            raise typer.Exit(1)
        try:
            n = int(days)
        except ValueError:
            n = 0
        if n <= 0:  # an unparseable window falls back to the default, as the protocol says; say so
            typer.echo(f"note: --days takes a whole number of days above 0, not {days!r}; showing 30 days.",
                       err=True)
            n = 30
        p = route.places()
        typer.echo(render_stats(p, n, json_out, cfg=route.load_config(p)))
