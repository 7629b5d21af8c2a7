"""`brain index`, `brain rebuild`, `brain status`, and the vault checks of `brain doctor`.

The index is a cache of the vault: `index` brings it up to date in the
foreground, `rebuild` throws it away (facts projection included) and builds
it again from the Markdown files and the facts logs — fact ids come from the
logs, so they are the same afterwards. Only the vault's writer may index: when
the daemon runs, it already keeps the index live, and these commands say so.
"""

from __future__ import annotations

import json
import shutil
import time
from typing import Optional

import typer

from . import route
from .doctor import check

_DAEMON_OWNS = ("the running daemon owns this vault's index (it keeps it up to date live).",
                "`brain status` shows its counts; to rebuild, `brain daemon stop` first, then `brain rebuild`.")


def _vault(p, cfg):
    try:
        vault = route.vault_path(p, cfg)
    except route.NoVault as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1)
    if not vault.is_dir():
        # never create a vault by asking about it: a typo would make an empty one
        typer.echo(f"error: the vault {vault} is not a folder.", err=True)
        typer.echo("fix: run `brain init PATH` with your notes folder, or correct BRAIN_VAULT.", err=True)
        raise typer.Exit(1)
    return vault


def _progress(label: str = "indexing", unit: str = "pages"):
    """A rich progress bar with a rate; returns (context manager, callback)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class PagesPerSecond(ProgressColumn):
        def render(self, task):
            elapsed = task.elapsed or 0
            rate = task.completed / elapsed if elapsed > 0 else 0
            return Text(f"{rate:,.0f} {unit}/s")

    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), PagesPerSecond(), TimeElapsedColumn(),
                   transient=False)
    task = bar.add_task("index", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total or 1)

    return bar, update


def _config_store(cfg) -> str | None:
    from ..daemon import config as config_mod

    value = config_mod.get(cfg, "store")
    return str(value) if value else None


def _writer_engine(p, cfg, vault, kind: str):
    from ..daemon.server.vault_engine import VaultEngine
    from ..daemon.vault_lock import VaultLocked

    try:
        return VaultEngine(vault, p, cfg, writer=kind, lock_wait_s=0)
    except VaultLocked as e:
        typer.echo(f"error: {_DAEMON_OWNS[0]} ({e})", err=True)
        typer.echo(f"fix: {_DAEMON_OWNS[1]}", err=True)
        raise typer.Exit(1)


def _index_in_foreground(engine, quiet: bool, vectors: bool = False) -> dict:
    started = time.monotonic()
    if quiet:
        engine.attach_index()
    else:
        bar, update = _progress()
        with bar:
            engine.attach_index(progress=update)
    report = dict(engine.index.last_report or {})
    report["seconds"] = round(time.monotonic() - started, 2)
    report["pages_per_s"] = round(report.get("parsed", 0) / report["seconds"]) if report["seconds"] else None
    if vectors and engine.setting("embeddings.enabled"):
        # only chunks whose text has no vector yet are embedded: re-runs cost nothing
        v_started = time.monotonic()
        stored = _all_embedded(engine)
        if stored is not None:  # loading the model would take seconds to embed nothing
            report.update(vectors=stored, embedded=0, vector_seconds=round(time.monotonic() - v_started, 2))
            return report
        if quiet:
            engine.load_models(background=False)
        else:
            bar, update = _progress("embedding", "chunks")
            with bar:
                engine.load_models(background=False, progress=update)
        stats = engine.vectors.stats() if engine.vectors is not None else {}
        report["vectors"] = stats.get("vectors", 0)
        report["embedded"] = stats.get("embedded", 0)
        report["vector_seconds"] = round(time.monotonic() - v_started, 2)
    return report


def _all_embedded(engine) -> int | None:
    """How many chunk vectors are stored when every chunk and every fact that
    needs one already has it (for the stored model); None when some work is left."""
    from ..indexer.embeddings.vector_files import SIDECAR
    from ..indexer.vault.visibility import Viewer

    try:
        meta = json.loads((engine.cache_dir / SIDECAR).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    deleted = set(meta.get("deleted") or [])
    live = {h for i, h in enumerate(meta.get("labels") or []) if h is not None and i not in deleted}
    if any(h not in live for h in engine.pages.chunk_hashes(Viewer.owner())):
        return None
    if not engine.facts.vectors_current(meta.get("model")):
        return None
    return len(live)


def _print_report(engine, report: dict, json_out: bool) -> None:
    status = engine.index.status()
    if json_out:
        typer.echo(json.dumps({**report, **status}, indent=2))
        return
    typer.echo(f"{status['pages']} pages, {status['chunks']} chunks, {status['links']} links "
               f"({status['unresolved_links']} unresolved) in {report['seconds']}s")
    typer.echo(f"  parsed {report.get('parsed', 0)}, unchanged {report.get('unchanged', 0)}, "
               f"removed {report.get('deleted', 0)}, renamed {report.get('renamed', 0)}, "
               f"skipped {report.get('skipped', 0)}")
    if "vectors" in report:
        typer.echo(f"  {report['vectors']} chunk vectors ({report['embedded']} embedded now) "
                   f"in {report['vector_seconds']}s")
    if status["problems"]:
        typer.echo(f"  {status['problems']} problems: `brain doctor index` lists them with fixes")


def register(app: typer.Typer) -> None:
    @app.command("index")
    def index_cmd(json_out: bool = typer.Option(False, "--json", help="print the report as JSON"),
                  watch: bool = typer.Option(False, "--watch", help="keep following saves until Ctrl-C"),
                  quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
                  vectors: bool = typer.Option(True, "--vectors/--keyword-only",
                                               help="also embed new chunks for semantic search (the slow part)"),
                  store: Optional[str] = typer.Option(None, "--store", metavar="URL",
                                                      help="index into this shared PostgreSQL store, the one "
                                                           "indexer of a team brain (default: config store; "
                                                           "docs/scaling.md)")):
        """Index the vault now, in the foreground (only what changed since the last run)."""
        p = route.places()
        cfg = route.load_config(p)
        vault = _vault(p, cfg)
        store = store or _config_store(cfg)
        if store:
            from .store_index import run

            return run(p, cfg, vault, store, watch=watch, quiet=quiet, json_out=json_out, vectors=vectors,
                       progress_bar=_progress)
        engine = _writer_engine(p, cfg, vault, "index")
        try:
            report = _index_in_foreground(engine, quiet or json_out, vectors=vectors)
            _print_report(engine, report, json_out)
            if watch:
                sync = engine.index.start_watching()
                typer.echo(f"watching {vault} ({sync.mode}); Ctrl-C to stop", err=True)
                if sync.warning:
                    typer.echo(f"warning: {sync.warning}", err=True)
                try:
                    while True:
                        time.sleep(1)
                except KeyboardInterrupt:
                    pass
        finally:
            engine.close()

    @app.command("rebuild")
    def rebuild_cmd(json_out: bool = typer.Option(False, "--json", help="print the report as JSON"),
                    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
                    store: Optional[str] = typer.Option(None, "--store", metavar="URL",
                                                        help="empty this shared PostgreSQL store and load it again "
                                                             "from the vault and its facts logs, with the same ids "
                                                             "(default: config store)")):
        """Drop the caches (page tables, keyword index, facts table) and rebuild them from the vault.

        Nothing in the vault is touched. Fact ids are read from the facts logs, so
        they are the same afterwards. Embeddings are kept: they are stored by
        content hash and re-used for unchanged text.
        """
        p = route.places()
        cfg = route.load_config(p)
        vault = _vault(p, cfg)
        store = store or _config_store(cfg)
        if store:
            from .store_index import run

            return run(p, cfg, vault, store, watch=False, quiet=quiet, json_out=json_out, vectors=True,
                       progress_bar=_progress, rebuild=True)
        from ..daemon.vault_lock import VaultLock, VaultLocked

        lock = VaultLock(vault)
        try:
            lock.acquire("rebuild", wait_s=0)
        except VaultLocked as e:
            typer.echo(f"error: {_DAEMON_OWNS[0]} ({e})", err=True)
            typer.echo(f"fix: {_DAEMON_OWNS[1]}", err=True)
            raise typer.Exit(1)
        try:
            cache = p.cache_dir(vault)
            for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
                (cache / name).unlink(missing_ok=True)
            shutil.rmtree(cache / "keyword", ignore_errors=True)
        finally:
            lock.release()
        engine = _writer_engine(p, cfg, vault, "rebuild")
        try:
            facts = engine.facts.rebuild()
            report = _index_in_foreground(engine, quiet or json_out)
            report["fact_log_lines"] = facts
            _print_report(engine, report, json_out)
            if not json_out:
                typer.echo(f"  facts table replayed from {facts} log lines")
        finally:
            engine.close()

    @app.command("status")
    def status_cmd(json_out: bool = typer.Option(False, "--json", help="print the status as JSON")):
        """Keyword and semantic search readiness with counts, facts, last sync, and the next step."""
        from .status_view import read_status, summary_lines, with_rate

        p = route.places()
        cfg = route.load_config(p)
        vault = _vault(p, cfg)
        body = read_status(p, cfg, vault)
        if json_out:
            typer.echo(json.dumps(body, indent=2))
            return
        body, rate = with_rate(p, cfg, vault, body)  # an estimate of the time left needs two readings
        for line in summary_lines(body, vault, rate):
            typer.echo(line)


@check("index")
def _index_checks(ctx):
    """Conflict copies, bad frontmatter, slug collisions, skipped files, unresolved links."""
    if ctx.vault is None or not ctx.vault.is_dir():
        return
    from ..daemon.server.vault_engine import VaultEngine

    engine = VaultEngine(ctx.vault, ctx.places, ctx.cfg)
    try:
        index = engine.attach_index()  # reconciles first unless the daemon owns the index
        status = index.status()
        yield ("ok", "pages", f"{status['pages']} pages, {status['chunks']} chunks, last sync {status['last_sync']}")
        yield from _problem_rows(index)
        unresolved = index.unresolved_links(5)
        if status["unresolved_links"]:
            # in Obsidian a link to a note not written yet is usual, often on purpose: information, not a problem
            examples = ", ".join(f"[[{u['target']}]] in {u['slug']}" for u in unresolved)
            yield ("info", "unresolved links", f"{status['unresolved_links']} links point at no page yet (e.g. "
                                               f"{examples}); a page with that name or alias resolves them")
        else:
            yield ("ok", "unresolved links", "every link resolves")
    finally:
        engine.close()


_PROBLEM_LABELS = {
    "conflict_copy": "conflict copies",
    "bad_frontmatter": "bad frontmatter",
    "unclear_visibility": "bad frontmatter",
    "slug_collision": "slug collisions",
    "symlink_outside": "links leading outside the vault",
}


def _problem_rows(index):
    problems = index.problems()
    by_label: dict[str, list[dict]] = {}
    for pr in problems:
        by_label.setdefault(_PROBLEM_LABELS.get(pr["kind"], "skipped or damaged files"), []).append(pr)
    for label in ("conflict copies", "bad frontmatter", "slug collisions", "links leading outside the vault",
                  "skipped or damaged files"):
        items = by_label.get(label, [])
        if not items:
            yield ("ok", label, "none")
            continue
        for pr in items[:20]:
            yield ("warn", label, f"{pr['path']}: {pr['detail']}")
        if len(items) > 20:
            yield ("warn", label, f"… and {len(items) - 20} more")
