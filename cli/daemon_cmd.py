"""`brain daemon start|stop|status|logs` and `brain serve`.

`brain serve` is what an MCP host spawns, so it takes a lean path
(`serve_main`, argparse, no typer) from `entry.py`; it is declared once, as
`SERVE` (its argparse parser here and its click command in `app.py` are made
from that). typer is
imported inside `register` only, for the same reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..daemon.config import DEFAULTS as config_defaults
from . import route
from .verb_commands import Command, Opt, add_options

DEFAULT_HTTP_HOST = config_defaults["http.host"]
DEFAULT_HTTP_PORT = config_defaults["http.port"]


SERVE = Command("serve", None, (
    Opt(("--surface",), None, help="verbs | starter | full (default: config mcp_surface, else full)"),
    Opt(("--http",), None, "flag", "serve Streamable HTTP MCP with bearer tokens"),
    Opt(("--host",), None, help=f"HTTP bind address (default {DEFAULT_HTTP_HOST})"),
    Opt(("--port",), None, "int", f"HTTP port (default {DEFAULT_HTTP_PORT})"),
    Opt(("--no-daemon",), None, "flag", "run the engine in this process (stdio only)"),
    Opt(("--remote",), None, help="relay stdio to the remote brain NAME (see `brain connect`)", metavar="NAME"),
    Opt(("--store",), None, help="with --http: a front end over this PostgreSQL, holding no state of its own "
        "(default: config store; docs/scaling.md)", metavar="URL"),
), summary="Serve MCP: what an MCP host spawns (stdio relay to the daemon, or in-process with --no-daemon), "
   "or --http for remote agents.", common=False)


def _serve_parser() -> argparse.ArgumentParser:
    # argparse's own errors and abbreviations (`--surf`), as `brain serve` has always taken them
    return add_options(argparse.ArgumentParser(prog="brain serve", description=SERVE.summary), SERVE, with_help=True)


def _err(msg: str, fix: str | None = None) -> None:
    print(f"error: {msg}", file=sys.stderr)
    if fix:
        print(f"fix: {fix}", file=sys.stderr)


def serve_main(argv: list[str]) -> int:
    """`brain serve …` without typer: resolve vault and surface, then relay/serve."""
    from ..daemon.client.relay import SurfaceError, resolve_surface

    ns = _serve_parser().parse_args(argv)
    p = route.places()
    cfg = route.load_config(p)
    if ns.remote:  # a client machine: no vault, no daemon here
        from .remotes import serve_remote

        return serve_remote(p, cfg, ns.remote)
    from ..daemon import config as config_mod

    # a front end over a shared store needs no vault on this host (docs/scaling.md)
    store = ns.store or (config_mod.get(cfg, "store") if ns.http else None)
    vault = None
    try:
        vault = route.vault_path(p, cfg)
    except route.NoVault as e:
        if store is None:
            _err(str(e))
            return 1
    try:
        surface, warning = resolve_surface(ns.surface, cfg)
    except SurfaceError as e:
        _err(str(e), "pass --surface verbs, starter or full")
        return 2
    if warning:
        print(f"brain serve: warning: {warning}", file=sys.stderr)
    if ns.store and not ns.http:
        _err("--store serves the verbs over HTTP from a shared store", "add --http (docs/scaling.md)")
        return 2
    if ns.http:
        if ns.no_daemon:
            _err("--http and --no-daemon cannot be combined: the HTTP server always talks to the daemon",
                 "drop --no-daemon")
            return 2
        from ..daemon.http.serve import run_http

        host = str(ns.host or config_mod.get(cfg, "http.host") or DEFAULT_HTTP_HOST)
        # --port 0 asks the system for a free port: not the same as "unset"
        port = ns.port if ns.port is not None else (config_mod.get(cfg, "http.port") or DEFAULT_HTTP_PORT)
        if not isinstance(port, int) or not 0 <= port <= 65535:
            _err(f"the HTTP port {port!r} is not a port number",
                 "pass --port with a number in 0-65535 (0 picks a free one), or fix `http.port` in the config")
            return 2
        if store is not None:
            # a front end on a host that has the vault writes pages too (put_page); elsewhere it cannot
            page_vault = vault if vault is not None and vault.is_dir() else None
            return _serve_front_end(p, cfg, store, page_vault, surface=surface, host=host, port=int(port))
        return run_http(p, vault, cfg, surface=surface, host=host, port=int(port))
    assert vault is not None
    if ns.no_daemon:
        from ..daemon.server.process import run_stdio

        return run_stdio(p, vault, cfg, surface)
    from ..daemon.client.relay import run_relay

    return run_relay(p, vault, cfg, surface)


def _serve_front_end(p, cfg: dict, store: str, vault: Path | None, *, surface: str, host: str, port: int) -> int:
    """`brain serve --http --store URL`: the verbs over the shared store, in this process."""
    from ..daemon.http.serve import run_http
    from ..daemon.server.front_end import open_front_end
    from .store_errors import open_or_explain

    front_end = open_or_explain("brain serve --http", lambda: open_front_end(p, cfg, store, vault=vault))
    if front_end is None:
        return 1
    return run_http(p, None, cfg, surface=surface, host=host, port=port, front_end=front_end)


def _vault_or_exit(p, cfg) -> Path:
    import typer

    try:
        return route.vault_path(p, cfg)
    except route.NoVault as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)


def register(app) -> None:
    import typer

    from .doctor import check

    daemon_app = typer.Typer(help="The resident process that owns the vault's indexes and facts log.",
                             no_args_is_help=True)
    app.add_typer(daemon_app, name="daemon")

    @daemon_app.command("start")
    def start(foreground: bool = typer.Option(False, "--foreground", help="run in this terminal, logging to stderr")):
        """Start the daemon for the configured vault (no-op when it already runs)."""
        from ..daemon.client.probe import find_daemon
        from ..daemon.client.spawn import DaemonStartError, connect_or_start

        p = route.places()
        cfg = route.load_config(p)
        vault = _vault_or_exit(p, cfg)
        if foreground:
            from ..daemon.server.process import run_daemon

            raise typer.Exit(run_daemon(p, vault, cfg, foreground=True))
        try:
            sock, started = connect_or_start(p, vault)
            sock.close()
        except DaemonStartError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        # the daemon's own word on its pid: it may listen outside our runtime dir
        found = find_daemon(p, vault)
        if found is None:
            typer.echo(f"error: the daemon for {vault} stopped answering right after it was reached.\n"
                       "fix: run `brain daemon start --foreground` to see why, or `brain daemon logs`.", err=True)
            raise typer.Exit(1)
        typer.echo(f"daemon {'started' if started else 'already running'}: pid {found.get('pid')}, "
                   f"socket {found['socket']}")

    @daemon_app.command("stop")
    def stop(every: bool = typer.Option(False, "--all", help="stop every daemon of yours, whatever vault it serves")):
        """Stop the daemon: calls in flight finish, the caches are flushed."""
        from ..daemon.client.stop import stop_all, stop_daemon

        p = route.places()
        if every:
            stopped = stop_all(p)
            for info, outcome in stopped:
                typer.echo(f"daemon for {info.get('vault')}: {outcome}")
            if not stopped:
                typer.echo(f"no daemon running (looked in {p.runtime_dir})")
            return
        cfg = route.load_config(p)
        vault = _vault_or_exit(p, cfg)
        typer.echo(f"daemon: {stop_daemon(p, vault)}")

    @daemon_app.command("status")
    def status(json_out: bool = typer.Option(False, "--json", help="print the status as JSON")):
        """Is the daemon running, on which socket, since when; and which daemons serve other vaults."""
        from ..daemon.client.probe import daemon_status, running_daemons

        p = route.places()
        cfg = route.load_config(p)
        vault = _vault_or_exit(p, cfg)
        st = daemon_status(p, vault)
        st["vault"] = str(vault)
        # daemons of vaults used before (the demo's, a previous `brain init`) are still yours to see
        st["others"] = [{k: d.get(k) for k in ("pid", "vault", "started_at", "socket")}
                        for d in running_daemons(p) if d.get("vault") != str(vault)]
        if json_out:
            typer.echo(json.dumps(st, indent=2))
        elif st["running"]:
            typer.echo(f"running: pid {st['pid']} since {st['started_at']}, socket {st['socket']}, vault {vault}")
        else:
            extra = " (a dead daemon left files behind; the next start cleans them)" if (
                st["stale_pid_file"] or st["stale_socket"]) else ""
            typer.echo(f"not running{extra}. `brain daemon start` starts it; any brain command does too.")
        for other in st["others"] if not json_out else ():
            typer.echo(f"also running: pid {other['pid']} since {other['started_at']} for another vault, "
                       f"{other['vault']} (`brain daemon stop --all` stops every daemon)")
        raise typer.Exit(0 if st["running"] else 3)

    @daemon_app.command("logs")
    def logs(lines: int = typer.Option(50, "-n", "--lines", min=0, help="how many lines from the end"),
             follow: bool = typer.Option(False, "-f", "--follow", help="keep printing new lines")):
        """Print the end of the daemon's log file."""
        import time

        from ..daemon.rendezvous import log_path

        p = route.places()
        cfg = route.load_config(p)
        vault = _vault_or_exit(p, cfg)
        path = log_path(p, vault)
        if not path.exists():
            typer.echo(f"no log yet at {path} (the daemon has not run for this vault).")
            raise typer.Exit(0)
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in (f.readlines()[-lines:] if lines else f.readlines()[:0]):
                typer.echo(line.rstrip("\n"))
            while follow:
                line = f.readline()
                if line:
                    typer.echo(line.rstrip("\n"))
                else:
                    time.sleep(0.3)

    # `brain serve` is declared once, as SERVE; app.py makes its help and completion from it

    @check("daemon")
    def _daemon_check(ctx):
        from ..daemon.client.probe import daemon_status

        if ctx.vault is None:
            yield ("warn", "daemon", "no vault configured")
            return
        st = daemon_status(ctx.places, ctx.vault)
        if st["running"]:
            yield ("ok", "daemon", f"running, pid {st['pid']} since {st['started_at']}")
            yield ("ok", "socket", f"{st['socket']} answers")
            mode = Path(st["socket"]).stat().st_mode & 0o777
            yield ("ok" if mode == 0o600 else "warn", "socket mode",
                   f"{oct(mode)}" + ("" if mode == 0o600 else " (expected 0o600: restart the daemon)"))
        else:
            yield ("warn", "daemon", "not running (it starts on the first brain command or `brain daemon start`)")
            if st["stale_socket"] or st["stale_pid_file"]:
                yield ("warn", "socket", "a dead daemon left its socket/pid file; `brain daemon stop` cleans up")
        log = Path(st["log"])
        if log.exists():
            yield ("ok", "daemon log", str(log))

    @check("memory_verbs_usage")
    def _usage_check(ctx):
        from ..daemon.server.usage_stats import stats_document

        path = ctx.places.usage_file
        if not path.exists():
            yield ("ok", "usage", "no verb calls recorded yet")
            return
        try:
            doc = stats_document(ctx.places, 30, ctx.cfg)
        except OSError as e:
            yield ("warn", "usage", f"{path} is unreadable ({e}); `brain protocol stats` cannot report")
            return
        per_verb = ", ".join(f"{v} {r['calls']}" for v, r in doc["by_verb"].items()) or "none"
        yield ("ok", "usage", f"{doc['total_calls']} verb calls in 30 days ({per_verb}); {path}")
