"""`brain demo [PATH]`: the README's first command — a guided round trip.

Copies the folder (the demo never writes to it), registers the copy as the
vault, lets the daemon index it, then shows what an agent gets: remember →
recall, a page search, an entity card and the context pack a session-start
hook would inject.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from ..indexer.embeddings.search_modes import MODEL_OFF
from . import answer_view, route, render
from .status_view import connect_hint


def _step(title: str, command: bool = True) -> None:
    typer.secho(f"\n{'$' if command else '#'} {title}", fg=typer.colors.CYAN, bold=True)


def _run(verb: str, args: dict, no_daemon: bool) -> dict:
    body, is_error = route.route_call(verb, args, no_daemon=no_daemon)
    if is_error:
        render.error(body)
        raise typer.Exit(1)
    extra = {}
    if verb == "recall" and body.get("results"):  # files a person can open, as `brain recall` shows them
        from .page_lookup import Pages

        p = route.places()
        extra["paths"] = Pages.of(p, route.vault_path(p)).paths(r["slug"] for r in body["results"])
    answer_view.show(verb, body, args, **extra)
    return body


def _wait_for(no_daemon: bool, key: str, timeout_s: float) -> dict | None:
    """Poll the status tool until `key` is true (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    body = None
    while time.monotonic() < deadline:
        body, is_error = route.route_call("status", {}, no_daemon=no_daemon)
        if not is_error and (body.get(key) or body.get("model_state") in ("failed", MODEL_OFF)):
            return body
        time.sleep(0.3)
    return body


def _index_here(p, vault: Path) -> dict:
    """--no-daemon: index the folder in this process (keyword search), then read the counts."""
    from ..daemon.protocol.dispatch import dispatch
    from ..daemon.server.vault_engine import VaultEngine
    from ..daemon.protocol.caller import Caller

    engine = VaultEngine(vault, p, route.load_config(p), writer="cli")
    try:
        engine.attach_index()  # reconciles the page tables and keyword index with the folder
        body, _ = dispatch(engine, "status", {}, Caller.local("cli"))
        return body
    finally:
        engine.close()


def demo_copy(p, source: Path) -> Path:
    """A fresh copy of `source` under brain's state folder; the demo runs there and never writes to `source`.

    A daemon still serving the copy of an earlier run is stopped first, so
    every run starts from the same pages and the same empty facts log.
    """
    import shutil

    from ..daemon.client.stop import stop_daemon

    dest = p.state_dir / "demo" / (source.name or "vault")
    if dest.exists():
        stop_daemon(p, dest)
        shutil.rmtree(dest)
        # a new vault, not the last one rolled back: its device id and journal of acknowledged facts
        # go too, or the earlier run's facts would be written back (docs/architecture.md,
        # "When an older log is put back"); its caches too
        for folder in (p.vault_state_dir(dest), p.cache_dir(dest)):
            shutil.rmtree(folder, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".brain"), symlinks=True)
    return dest


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(path: Path = typer.Argument(Path("sample_brain"), metavar="PATH", help="The notes folder to copy."),
             no_daemon: bool = typer.Option(False, "--no-daemon", help="run everything in this process")):
        """Copy PATH, register the copy as the vault and show remember → recall, search, an entity card and a
        context pack (PATH itself is never written to)."""
        from ..daemon import config as config_mod
        from ..indexer.vault.timestamps import now_iso
        from .init_cmd import stop_previous

        source = path.expanduser().resolve()
        if not source.is_dir():
            typer.echo(f"error: {source} is not a folder.", err=True)
            typer.echo("fix: run this from the root of a clone of brain (it has sample_brain/), or pass the path "
                       "of a notes folder.", err=True)
            raise typer.Exit(1)
        p = route.places()
        cfg = config_mod.load(p.config_file)
        previous = cfg.get("vault")
        vault = demo_copy(p, source)
        cfg["vault"] = str(vault)
        cfg.setdefault("protocol_installed_at", now_iso())
        config_mod.save(p.config_file, cfg)
        _step(f"brain init {vault}")
        typer.echo(f"vault: {vault}  (a copy of {source}: the demo leaves the original as it was)")
        stop_previous(p, previous, vault)

        _step(("this process indexes" if no_daemon else "the daemon indexes")
              + " the folder (`brain status` shows the counts any time)", command=False)
        t0 = time.monotonic()
        status = _index_here(p, vault) if no_daemon else _wait_for(no_daemon, "index_ready", 60)
        if status:
            counts = ", ".join(f"{status[k]} {k}" for k in ("pages", "chunks", "facts") if k in status)
            typer.echo(f"indexed {counts} in {time.monotonic() - t0:.1f}s")
        if not no_daemon:
            typer.echo("loading the embedding model and embedding the pages (keyword search answers meanwhile)…")
            status = _wait_for(no_daemon, "vectors_ready", 180)
            if status and status.get("vectors_ready"):
                typer.echo(f"semantic search ready: {status.get('vectors', 0)} chunk vectors after "
                           f"{time.monotonic() - t0:.1f}s")
            elif status:
                typer.echo(f"semantic search not ready ({status.get('model_state')}); continuing keyword-only")

        _step('brain remember "I prefer dark mode in every editor" --provenance demo --entity people/me')
        _run("remember", {"fact": "I prefer dark mode in every editor", "provenance": "demo", "entity": "people/me"}, no_daemon)
        _step("brain recall --entity people/me")
        _run("recall", {"entity": "people/me"}, no_daemon)
        # a question in a person's words: the page that answers it comes first, with the lines that say so
        fact = "Tom Whitaker leads the Classic billing migration; the switch-off moved to March 2027"
        _step(f'brain remember "{fact}" --provenance demo --entity people/tom-whitaker')
        _run("remember", {"fact": fact, "provenance": "demo", "entity": "people/tom-whitaker"}, no_daemon)
        _step('brain recall "who is leading the billing migration?" --limit 3')
        _run("recall", {"query": "who is leading the billing migration?", "limit": 3}, no_daemon)
        _step("brain entity Priya")
        _run("entity", {"name": "Priya"}, no_daemon)
        _step("brain context people/me --budget 600")
        _run("context_pack", {"entities": "people/me", "budget_tokens": 600}, no_daemon)
        typer.echo(f"\nNext: connect an agent with `{connect_hint()}`, or install the session-start hook with "
                   "`brain hooks install claude`. To use your own notes: `brain init ~/notes` (it stops this "
                   "demo's daemon).")
