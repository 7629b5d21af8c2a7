"""`brain init PATH`: register the vault, then start its daemon and watch the index build.

The keyword index is built while a progress bar shows it; semantic search
(loading the model, embedding every chunk) goes on in the daemon, and init
hands over with how far it got and about how long is left. A daemon still
serving the previously registered vault is stopped: one vault at a time.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import typer

from ..indexer.embeddings.search_modes import MODEL_OFF
from . import route
from .init_folder import chosen_folder
from .status_view import daemon_reading, duration, eta_seconds, next_step, semantic_line, semantic_progress, with_rate

# how long init watches the model load before handing over with "loading"
MODEL_WAIT_S = 40.0
POLL_S = 0.25
# the least time given to measuring the embedding rate for the estimate
RATE_WAIT_S = 5.0


def run_init(path: Path | None, start: bool, create: bool = False) -> int:
    p = route.places()
    vault = chosen_folder(path, create)
    if vault is None:
        return 1
    from ..daemon.private_files import private_dir

    with InitLock(private_dir(p.config_dir) / "init.lock", vault) as held:
        if not held.ok:
            typer.echo(f"error: another `brain init` is running (registering {held.other or 'a folder'}); "
                       f"{vault} was not registered.", err=True)
            typer.echo("fix: wait for it to finish, then run this `brain init` again (one vault at a time).",
                       err=True)
            return 1
        return _register(p, vault, start)


class InitLock:
    """One `brain init` at a time: two at once on different folders would both say they
    registered theirs, and only the last would be. A non-blocking lock on a file in the
    config folder, holding the folder being registered (for the other one's message)."""

    def __init__(self, path: Path, vault: Path):
        self.path, self.vault = path, vault
        self.fd: int | None = None
        self.ok = False
        self.other = ""

    def __enter__(self) -> "InitLock":
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.other = os.pread(self.fd, 4096, 0).decode("utf-8", "replace").strip()
            return self
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(self.vault).encode() + b"\n", 0)
        self.ok = True
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock


def _register(p, vault: Path, start: bool) -> int:
    from ..daemon import config as config_mod
    from ..indexer.vault.timestamps import now_iso

    if vault.exists() and not vault.is_dir():  # made a file since it was chosen
        typer.echo(f"error: {vault} is a file, not a folder.", err=True)
        typer.echo("fix: name the folder of your Markdown notes, e.g. `brain init ~/notes`.", err=True)
        return 1
    from ..daemon.private_files import private_dir, user_umask

    if not vault.exists():  # asked for (chosen_folder); the person's folder: their umask, not brain's private one
        try:
            vault.mkdir(parents=True)
        except OSError as e:
            typer.echo(f"error: could not make {vault}: {e.strerror or e}.", err=True)
            typer.echo("fix: name a folder you can write to, e.g. `brain init ~/notes --create`.", err=True)
            return 1
        os.chmod(vault, 0o777 & ~user_umask())
    from ..indexer.vault.brain_folder import BrainFolderError, brain_folder

    try:
        private_dir(brain_folder(vault))
    except BrainFolderError as e:
        typer.echo(f"error: {e}", err=True)
        return 1
    cfg = config_mod.load(p.config_file)
    previous = cfg.get("vault")
    cfg["vault"] = str(vault)
    cfg.setdefault("protocol_installed_at", now_iso())
    config_mod.save(p.config_file, cfg)
    files = sum(1 for _ in vault.rglob("*.md"))
    typer.echo(f"vault: {vault}  ({files:,} Markdown files)")
    typer.echo(f"config: {p.config_file}")
    typer.echo("Facts are world-visible to every agent connected to this brain unless saved with --visibility private.")
    stop_previous(p, previous, vault)
    if not start:
        typer.echo("next: `brain daemon start` indexes the vault and keeps it up to date")
        return 0
    return _start_and_watch(p, cfg, vault, files)


def stop_previous(p, previous, vault: Path) -> None:
    """Stop the daemon of the vault registered before this one, if it still runs."""
    from ..daemon.client.probe import daemon_status
    from ..daemon.client.stop import stop_daemon

    if not previous:
        return
    old = Path(previous).expanduser().resolve()
    if old == vault or not daemon_status(p, old)["running"]:
        return
    typer.echo(f"previous vault {old}: daemon {stop_daemon(p, old)}")


def _start_and_watch(p, cfg, vault: Path, files: int) -> int:
    from ..daemon.client.spawn import DaemonStartError, connect_or_start

    t0 = time.monotonic()
    try:
        sock, _started = connect_or_start(p, vault)
        sock.close()
    except DaemonStartError as e:
        message, _, fix = str(e).partition("\nfix: ")
        typer.echo(f"error: {message}", err=True)
        typer.echo(f"fix: {fix or 'run `brain daemon start --foreground` to see why'}", err=True)
        return 1
    body = _keyword_index(p, cfg, vault, files)
    if body is None:
        typer.echo("error: the daemon stopped answering while it indexed.", err=True)
        typer.echo("fix: `brain daemon logs` shows why; `brain daemon start` tries again.", err=True)
        return 1
    typer.echo(f"keyword search ready: {body.get('pages', 0):,} pages, {body.get('chunks', 0):,} chunks "
               f"in {time.monotonic() - t0:.1f} s")
    body = _hand_over(p, cfg, vault, body)
    typer.echo(f"next: {next_step(body, vault)}")
    return 0


def _keyword_index(p, cfg, vault: Path, files: int) -> dict | None:
    """Poll the daemon's status with a progress bar until the keyword index is ready."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("keyword index"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
                   TimeElapsedColumn(), transient=True, disable=not sys.stdout.isatty())
    with bar:
        task = bar.add_task("index", total=files or None)
        while True:
            body = daemon_reading(p, cfg, vault)
            if body is None:
                return None
            done, total = (body.get("index_progress") or [0, files])[:2]
            if body.get("index_ready"):
                bar.update(task, completed=total or files, total=total or files)
                return body
            bar.update(task, completed=done, total=total or None)
            time.sleep(POLL_S)


def _hand_over(p, cfg, vault: Path, body: dict) -> dict:
    """Wait for the model to load and the embedding to show a rate, then say where it stands.

    What the load is doing (the one-time ONNX export takes tens of seconds) shows in a
    spinner on a terminal, and as one line per step otherwise, so a log is never silent."""
    from contextlib import nullcontext

    from rich.console import Console

    console = Console()
    if console.is_terminal:
        waiting = console.status("loading the embedding model…")
        say = lambda text: waiting.update(text)  # noqa: E731
    else:
        waiting, say = nullcontext(), typer.echo
    with waiting:  # print only once the spinner is gone, or the two share a line
        body, message = _watch_model(p, cfg, vault, body, say)
    typer.echo(message)
    return body


def loading_line(body: dict) -> str | None:
    """What the model load is doing now, or None once it is no longer loading."""
    if body.get("model_state") not in (None, "idle", "loading", "not loaded"):
        return None
    return f"semantic search: {body.get('model_phase') or 'loading the embedding model'}…"


def _watch_model(p, cfg, vault: Path, body: dict, say=lambda text: None) -> tuple[dict, str]:
    """(the last status, the line to print): semantic search ready, failed or off, or
    building with an estimate of the time left. `say` hears each step of a long load once."""
    deadline = time.monotonic() + MODEL_WAIT_S
    said = None
    while time.monotonic() < deadline:
        if body.get("vectors_ready") or body.get("model_state") in ("failed", MODEL_OFF):
            break
        if body.get("model_state") == "ready" and semantic_progress(body) is not None:
            body, rate = with_rate(p, cfg, vault, body, max_wait_s=max(RATE_WAIT_S, deadline - time.monotonic()))
            if semantic_progress(body) is None:
                break  # done while we measured
            return body, building_message(body, rate)
        step = loading_line(body)
        if step is not None and step != said:
            say(step)
            said = step
        time.sleep(POLL_S * 2)
        body = daemon_reading(p, cfg, vault) or body
    line = semantic_line(body)
    settled = body.get("vectors_ready") or body.get("model_state") in ("failed", MODEL_OFF)
    return body, line if settled else f"{line}; `brain status` shows its progress"


def building_message(body: dict, rate: float | None) -> str:
    done, total = semantic_progress(body) or (0, 0)   # called while building; a finished build reads 0/0
    eta = eta_seconds(body, rate)
    return (f"semantic search is building in the background: {done:,}/{total:,} chunks"
            + (f", {duration(eta)}" if eta is not None else "") + " (`brain status` shows how far it got)")
