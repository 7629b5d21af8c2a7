"""`brain index --store URL` and `brain rebuild --store URL`: the vault into a shared store
(docs/scaling.md, "Who writes what"; the work is daemon/server/store_indexer.py)."""

from __future__ import annotations

import json
import signal
import time

import typer

from .store_errors import open_or_explain


def _open(p, vault, store: str, writer: str):
    from ..daemon.server.store_indexer import StoreIndexer
    from ..daemon.vault_lock import VaultLocked

    try:
        return open_or_explain(f"brain {writer}", lambda: StoreIndexer(vault, store, p, writer=writer))
    except VaultLocked as e:
        typer.echo(f"error: another process writes this vault's index and facts log ({e}).", err=True)
        typer.echo("fix: stop it first (`brain daemon stop`, or the other `brain index --store`), then retry.",
                   err=True)
        raise typer.Exit(1)


def run(p, cfg, vault, store: str, *, watch: bool, quiet: bool, json_out: bool, vectors: bool,
        progress_bar, rebuild: bool = False) -> None:
    """`progress_bar(label, unit)`: the bar `brain index` shows (index_cmd._progress)."""
    _progress = progress_bar
    indexer = _open(p, vault, store, "rebuild" if rebuild else "index")
    if indexer is None:
        raise typer.Exit(1)
    try:
        started = time.monotonic()
        if rebuild:
            indexer.parts.reset()
        if quiet or json_out:
            report = indexer.index_pages()
        else:
            bar, update = _progress()
            with bar:
                report = indexer.index_pages(progress=update)
        report = dict(report)
        report["seconds"] = round(time.monotonic() - started, 2)
        report["facts_into_store"] = indexer.facts_into_store()
        report["facts_into_vault"] = indexer.facts_into_vault()
        if vectors and cfg.get("embeddings.enabled", True) is not False:
            v_started = time.monotonic()
            if not (quiet or json_out):
                typer.echo("loading the embedding model…", err=True)
            indexer.load_model()
            if quiet or json_out:
                report.update(indexer.embed_chunks())
            else:
                bar, update = _progress("embedding", "chunks")
                with bar:
                    report.update(indexer.embed_chunks(update))
            report["vector_seconds"] = round(time.monotonic() - v_started, 2)
        if json_out:
            typer.echo(json.dumps(report, indent=2, default=str))
        else:
            typer.echo(f"{report.get('parsed', 0)} pages parsed, {report.get('unchanged', 0)} unchanged, "
                       f"{report.get('deleted', 0)} removed in {report['seconds']}s; facts: "
                       f"{report['facts_into_store']} into the store, {report['facts_into_vault']} into the vault")
            if "vectors" in report:
                typer.echo(f"  {report['vectors']} chunk vectors ({report.get('embedded', 0)} embedded now, "
                           f"{report.get('fact_vectors', 0)} fact vectors) in {report['vector_seconds']}s")
        if watch:
            sync = indexer.watch()
            typer.echo(f"watching {vault} into {store_label(store)}; Ctrl-C to stop", err=True)
            if getattr(sync, "warning", None):
                typer.echo(f"warning: {sync.warning}", err=True)
            signal.signal(signal.SIGTERM, lambda *_: indexer.stop.set())
            try:
                indexer.run_until_stopped()
            except KeyboardInterrupt:
                pass
    finally:
        indexer.close()


def store_label(url: str) -> str:
    from ..daemon.server.store_engine import store_label as label

    return label(url)
