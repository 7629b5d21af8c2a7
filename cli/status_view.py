"""What `brain status`, a bare `brain` and `brain init` tell a person about the vault.

One reading of the status (the daemon's status tool when it runs, the caches
otherwise), turned into readiness lines for keyword and semantic search with
counts and an estimate of the time left, and the next command worth running.
Standard library only: a bare `brain` must answer quickly.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ..indexer.embeddings.search_modes import MODEL_OFF, OFF_TEXT
from ..indexer.vault.visibility import Viewer


def read_status(p, cfg, vault: Path) -> dict:
    """The status tool's answer plus `daemon: true` when the daemon runs, else the caches' counts."""
    from ..daemon.client.probe import daemon_status

    if daemon_status(p, vault)["running"]:
        body = daemon_reading(p, cfg, vault)
        if body is not None:
            return body
    from ..daemon.server.vault_engine import VaultEngine
    from ..indexer.pages.vault_index import VaultIndex

    engine = VaultEngine(vault, p, cfg)
    try:
        # read the caches as they are: a status must not start an index run
        index = VaultIndex(engine.vault, engine.page_db, engine.cache_dir, read_only=True)
        body = {"daemon": False, **index.status(), **engine.facts.counts(Viewer.owner())}
        if not engine.setting("embeddings.enabled"):
            body["model_state"] = MODEL_OFF  # off whether a daemon runs or not
        index.close()
        return body
    finally:
        engine.close()


def daemon_reading(p, cfg, vault: Path) -> dict | None:
    """The running daemon's status tool answer with `daemon: true`, or None when it does not answer."""
    from ..daemon.client.calls import send

    try:
        body, is_error = send(p, vault, "status", {})
    except Exception:  # it stopped between the look and the call
        return None
    return None if is_error else {"daemon": True, **body}


def with_rate(p, cfg, vault: Path, first: dict, max_wait_s: float = 4.0) -> tuple[dict, float | None]:
    """While the vectors build and the daemon gives no estimate of its own, measure chunks embedded
    per second: (newest reading, rate or None).

    The count moves a batch at a time, so the rate is taken between two moves (the first
    move ends a batch that started before we looked); at most `max_wait_s` is spent on it.
    """
    import time

    start = semantic_progress(first)
    if start is None or eta_seconds(first) is not None or not first.get("daemon"):
        return first, None
    deadline = time.monotonic() + max_wait_s
    body = first
    moves: list[tuple[float, int]] = []  # (time, count) at each move of the count
    last = start[0]
    while time.monotonic() < deadline and len(moves) < 2:
        time.sleep(0.1)
        reading = daemon_reading(p, cfg, vault)
        progress = semantic_progress(reading) if reading is not None else None
        if reading is None or progress is None:
            return reading or body, None  # stopped, or done building
        body = reading
        count = progress[0]
        if count != last:
            moves.append((time.monotonic(), count))
            last = count
    if len(moves) < 2 or moves[1][1] <= moves[0][1]:
        return body, None
    return body, (moves[1][1] - moves[0][1]) / (moves[1][0] - moves[0][0])


def semantic_progress(body: dict) -> tuple[int, int] | None:
    """(chunks embedded, chunks to embed in all) while the vectors are being built, else None."""
    if body.get("vectors_ready") or "vectors" not in body:
        return None
    done = int(body.get("vectors") or 0)
    return done, done + int(body.get("vectors_pending") or 0)


def duration(seconds: float) -> str:
    """A rough time span a person reads at a glance: "about 40 s", "about 2 min", "about 1 h 10 min"."""
    s = max(1, round(seconds))
    if s < 60:
        return f"about {s} s"
    if s < 3600:
        return f"about {round(s / 60)} min"
    return f"about {s // 3600} h {round(s % 3600 / 60)} min"


def eta_seconds(body: dict, rate: float | None = None) -> float | None:
    """Seconds until the vectors are built: the daemon's own estimate when it gives one, else from
    `rate` (chunks per second measured by the caller)."""
    build = body.get("vector_build")  # the daemon's own meter of the vector build
    if isinstance(build, dict) and isinstance(build.get("eta_s"), (int, float)):
        return float(build["eta_s"])
    progress = semantic_progress(body)
    if progress is None or not rate or rate <= 0:
        return None
    return (progress[1] - progress[0]) / rate


def keyword_line(body: dict) -> str:
    counts = f"{body.get('pages', 0):,} pages, {body.get('chunks', 0):,} chunks"
    if not body.get("daemon"):
        if not body.get("last_sync"):
            return "keyword search: not built yet"
        return f"keyword search: {counts} as of the last sync"
    if body.get("index_ready"):
        return f"keyword search: ready ({counts})"
    done, total = (body.get("index_progress") or [0, 0])[:2]
    return f"keyword search: building ({done:,}/{total:,} files looked at)" if total else "keyword search: building"


def semantic_line(body: dict, rate: float | None = None) -> str:
    state = body.get("model_state")
    if state == MODEL_OFF:
        return f"semantic search: {OFF_TEXT}; `brain config set embeddings.enabled true` turns it on"
    if not body.get("daemon"):
        return "semantic search: runs in the daemon (`brain daemon start`)"
    if state == "failed":
        return "semantic search: the embedding model failed to load (`brain doctor model` says why)"
    if body.get("vectors_ready"):
        return f"semantic search: ready ({body.get('vectors', 0):,} chunk vectors)"
    progress = semantic_progress(body)
    if state != "ready" or progress is None:
        return "semantic search: loading the embedding model (keyword search answers meanwhile)"
    eta = eta_seconds(body, rate)
    return (f"semantic search: building in the background: {progress[0]:,}/{progress[1]:,} chunks"
            + (f", {duration(eta)}" if eta is not None else ""))


def connect_hint() -> str:
    """The line that registers this installation with Claude Code, by its absolute path
    (a host does not start in this shell), on the surface `brain mcp install` uses."""
    from ..hooks.install import brain_program
    from ..hooks.mcp_register import MCP_SERVER_ARGS

    return f"claude mcp add --scope user brain -- {shlex.join([*brain_program(), *MCP_SERVER_ARGS])}"


def own_entity(vault: Path) -> str:
    """The entity a first fact about the user goes under: their own page (alias `me`) when the
    vault has one, so the hint never files facts under a slug with no page."""
    from .page_lookup import Pages
    from .route import places

    try:
        mine = Pages.of(places(), vault).own_page()
    except Exception:  # a hint never fails the command
        mine = None
    return shlex.quote(mine) if mine else "people/me"


def next_step(body: dict, vault: Path) -> str:
    """The one command worth running next, given what the status says."""
    if not body.get("daemon") and not body.get("last_sync"):
        return "`brain daemon start` indexes the vault and keeps it up to date (or `brain index` for one run)"
    if not body.get("pages") and (body.get("index_ready") or not body.get("daemon")):
        return f"the vault has no Markdown pages yet: add .md files to {vault}, or `brain init PATH` with your notes"
    if not body.get("facts"):
        return (f'`brain remember "I prefer dark mode" --provenance me --entity {own_entity(vault)}` saves a first '
                f"fact; `{connect_hint()}` connects Claude Code")
    return "`brain recall WORDS` searches your notes and facts; `brain doctor` checks the whole setup"


def summary_lines(body: dict, vault: Path, rate: float | None = None) -> list[str]:
    """`brain status` in words: where, what is ready, how much, what next."""
    from .render import age

    lines = [
        f"vault: {vault}",
        f"daemon: {'running' if body.get('daemon') else 'not running (counts as of the last sync)'}",
        keyword_line(body),
        semantic_line(body, rate),
        f"facts: {body.get('facts', 0):,} ({body.get('active_facts', 0):,} active)",
        f"last sync: {body.get('last_sync') or 'never'}" + (f" ({age(body['last_sync'])})" if body.get("last_sync")
                                                             else "")
        + f"  pending events: {body.get('pending_events', 0)}  problems: {body.get('problems', 0)}",
    ]
    if body.get("problems"):
        lines.append("  `brain doctor index` lists the problems with their fixes")
    if body.get("watching"):
        lines.append(f"watching: {body['watching']}")
    lines.append(f"next: {next_step(body, vault)}")
    return lines


def bare_brain() -> int:
    """`brain` with no arguments: what brain is, a short status, and the next command to run."""
    from .. import __version__
    from ..daemon.config import ConfigError
    from . import route

    print(f"brain {__version__}: a memory server for AI agents over a folder of Markdown notes")
    try:
        p = route.places()
        cfg = route.load_config(p)
        try:
            vault = route.vault_path(p, cfg)
        except route.NoVault:
            print("no vault registered yet")
            print("next: `brain init ~/notes` registers your folder of Markdown notes and indexes it "
                  "(`brain demo sample_brain` in a clone of brain shows a round trip first)")
            return 0
        if not vault.is_dir():
            print(f"vault: {vault} is not a folder")
            print("next: `brain init PATH` with your notes folder")
            return 0
        body = read_status(p, cfg, vault)
    except ConfigError as e:
        message, _, fix = str(e).partition(" fix: ")
        print(f"error: {message}", file=sys.stderr)
        print(f"fix: {fix or '`brain doctor` checks the setup'}", file=sys.stderr)
        return 1
    print(f"vault: {vault}")
    print(f"  {keyword_line(body)}")
    print(f"  {semantic_line(body)}")
    print(f"  facts: {body.get('facts', 0):,} ({body.get('active_facts', 0):,} active)")
    print(f"next: {next_step(body, vault)}")
    print("`brain status` tells more; `brain --help` lists every command")
    return 0
