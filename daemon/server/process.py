"""The resident daemon: one process per vault that owns the indexes and facts log.

Start-up order matters for the clients waiting on us: take the vault's
writer lock (a second daemon stops here with a message naming the holder),
open the engine, listen on the Unix socket, and only then do the heavy work
(attach and reconcile the index, start the watcher, load the embedding
model) in a background thread. Calls that arrive before the index is ready
wait briefly, then get what is ready (keyword-only, `search_degraded`).

SIGTERM (or SIGINT) stops accepting, lets the calls in flight finish, then
closes the engine, which flushes and releases the lock. Logs go to a file in
the state dir; after start-up stdout and stderr point there too, so a stray
print from a library can never reach a client.

Run as `python -m brain.daemon.server --vault PATH [--foreground]`, which is
what `brain daemon start` and the clients' auto-start do.
"""

from __future__ import annotations

import argparse
import json
import logging
import logging.handlers
import os
import signal
import sys
import threading
import time
from pathlib import Path

from ...indexer.vault.atomic_files import write_atomic

from ... import __version__
from .. import config as config_mod
from ..places import Places
from ..private_files import private_roots, repair_modes, restrict_umask
from ...indexer.embeddings.telemetry_off import turn_off_telemetry
from ...indexer.vault.timestamps import now_iso
from ..rendezvous import EXIT_ALREADY_RUNNING, log_path, pid_path, read_pid_file

log = logging.getLogger("brain.daemon")

# exit codes the spawner understands (EXIT_ALREADY_RUNNING is shared: daemon/rendezvous.py)
EXIT_OK = 0
EXIT_LOCKED = 4            # a non-daemon writer holds the vault: a spawner reports it
EXIT_FAILED = 1

# how long SIGTERM waits for calls in flight
DRAIN_S = 10.0
# then how long it waits for their answers to be written to the clients
FLUSH_S = 2.0
# and how long for a warm-up still using the caches before exiting without closing them
WARMUP_WAIT_S = 15.0



def setup_logging(path: Path, *, to_stderr: bool) -> None:
    # logs can quote fact text: keep them to the user
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    fh = logging.handlers.RotatingFileHandler(path, maxBytes=5 * 1024 * 1024, backupCount=2, encoding="utf-8")
    fh.setFormatter(fmt)
    root.addHandler(fh)
    if to_stderr:
        sh = logging.StreamHandler(sys.stderr)
        sh.setFormatter(fmt)
        root.addHandler(sh)
    # the SDK logs every request at INFO/DEBUG; keep the log about us
    logging.getLogger("mcp").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)


class Warmup:
    """The heavy start-up work, off the accept path: index, watcher, model."""

    def __init__(self, engine, *, watch: bool = True, models: bool = True):
        self.engine = engine
        self.watch = watch
        self.models = models
        self.index_ready = threading.Event()
        self.models_ready = threading.Event()
        self.done = threading.Event()
        self.errors: dict[str, str] = {}
        self.timings: dict[str, float] = {}
        self.started = False

    def start(self) -> None:
        self.started = True
        threading.Thread(target=self.run, name="warmup", daemon=True).start()

    def run(self) -> None:
        try:
            self._run()
        finally:
            self.index_ready.set()
            self.models_ready.set()
            self.done.set()

    def _run(self) -> None:
        if not self.models:
            self.engine.models_off()  # "off" from the start, not "not loaded": status, init and recall read it
        t0 = time.monotonic()
        try:
            self.engine.attach_index(watch=self.watch)
        except Exception as e:  # the daemon still serves facts without an index
            log.exception("could not attach the index")
            self.errors["index"] = str(e)
        self.timings["index_s"] = round(time.monotonic() - t0, 3)
        self.index_ready.set()
        log.info("index ready in %.2fs", self.timings["index_s"])
        t1 = time.monotonic()
        if self.models:
            try:
                # we are already off the accept path: load in this thread
                self.engine.load_models(background=False)
            except Exception as e:  # keyword-only search, said so in search_degraded
                log.exception("could not load the embedding model")
                self.errors["model"] = str(e)
        self.timings["models_s"] = round(time.monotonic() - t1, 3)
        self.models_ready.set()
        log.info("models ready in %.2fs", self.timings["models_s"])


def close_engine(engine, warmup: Warmup | None, wait_s: float | None = None) -> None:
    """Close the engine once the warm-up is done with it.

    Closing the index or vectors under a reconcile or an embedding build that
    is still running would pull native structures from under it. If the
    warm-up outlasts `wait_s`, leave everything to process exit instead: the
    facts log is already on disk (fsynced per write), the caches are
    reconciled on the next start, and the kernel drops the lock.
    """
    wait_s = WARMUP_WAIT_S if wait_s is None else wait_s
    engine.stopping.set()  # a one-time model export in progress (or about to start) ends now
    # a warm-up that never started (the socket could not be bound) holds nothing
    if warmup is not None and warmup.started and not warmup.done.wait(wait_s):
        log.warning("warm-up still running after %.0fs; exiting without closing the caches", wait_s)
        return
    engine.close()


def open_engine(places: Places, vault: Path, cfg: dict, writer: str, lock_wait_s: float):
    """The engine, holding the vault's writer lock, with synthesize's LLM provider attached."""
    from .vault_engine import VaultEngine

    llm = None
    try:
        from ..llm.providers import provider_from_config

        # the daemon is an entry point: it reads API keys from its environment
        llm = provider_from_config(cfg, os.environ)
    except Exception:
        log.warning("no LLM provider: synthesize will answer `unavailable`", exc_info=True)
    return VaultEngine(vault, places, cfg, writer=writer, lock_wait_s=lock_wait_s, llm=llm)


def _open_as_daemon(places: Places, vault: Path, cfg: dict, wait_s: float = 3.0, daemon_wait_s: float = 0.3):
    """Open the engine as the vault's writer.

    When a daemon holds the lock (two spawners raced) give up after a blink:
    a loser must never take over much later, after the winner is gone. A
    short-lived writer (a `--no-daemon` CLI call) is waited for a few seconds.
    """
    from ..vault_lock import VaultLock, VaultLocked

    started = time.monotonic()
    while True:
        try:
            return open_engine(places, vault, cfg, "daemon", lock_wait_s=0.0)
        except VaultLocked as e:
            # an empty holder is a stamp being rewritten: look again shortly
            holder = e.holder or VaultLock(vault).holder()
            waited = time.monotonic() - started
            if waited > (daemon_wait_s if holder.get("kind") == "daemon" else wait_s):
                raise VaultLocked(VaultLock(vault).path, holder) from None
        time.sleep(0.02)


def run_daemon(places: Places, vault: Path, cfg: dict, *, foreground: bool = False) -> int:
    """The daemon's whole life; returns the process exit code."""
    from ...indexer.vault.brain_folder import BrainFolderError
    from ..vault_lock import VaultLocked

    vault = Path(vault).expanduser().resolve()
    if not vault.is_dir():
        print(f"brain daemon: the vault {vault} is not a folder. Fix: run `brain init PATH`.", file=sys.stderr)
        return EXIT_FAILED
    setup_logging(log_path(places, vault), to_stderr=foreground)
    _dump_stacks_on_sigusr1(log_path(places, vault))
    try:
        engine = _open_as_daemon(places, vault, cfg)
    except BrainFolderError as e:   # .brain is a link or a file: write nothing (architecture.md "Symlinks")
        print(f"brain daemon: not starting — {e}", file=sys.stderr)
        return EXIT_FAILED
    except VaultLocked as e:
        if e.holder.get("kind") == "daemon":
            msg = (f"brain daemon: not starting — {e}. A daemon already serves this vault; "
                   "`brain daemon status` shows it, `brain daemon stop` stops it.")
            code = EXIT_ALREADY_RUNNING
        else:
            msg = (f"brain daemon: not starting — {e}. That process writes to the vault itself; "
                   "stop it (or let it finish), then run the command again.")
            code = EXIT_LOCKED
        print(msg, file=sys.stderr)
        log.warning(msg)
        return code
    # files an older brain (or another umask) left readable by others
    fixed = repair_modes(private_roots(places, vault))
    if fixed:
        log.warning("made %d file(s) private again (0700 folders, 0600 files), e.g. %s", len(fixed), fixed[0])
    warmup = Warmup(engine, watch=True, models=bool(config_mod.get(cfg, "embeddings.enabled")))
    try:
        return _run_with_engine(places, vault, cfg, engine, warmup, foreground)
    finally:
        close_engine(engine, warmup)
        log.info("daemon stopped")


def _run_with_engine(places: Places, vault: Path, cfg: dict, engine, warmup: Warmup, foreground: bool) -> int:
    import anyio

    from .mcp import CallGate
    from .socket import SocketServer

    sock_path = places.socket_path(vault)
    sock_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    gate = CallGate()
    surface = config_mod.get(cfg, "mcp_surface") or "full"
    st = os.stat(vault)
    identity = {"vault": str(vault), "dev": st.st_dev, "ino": st.st_ino, "pid": os.getpid(),
                "version": __version__, "socket": str(sock_path)}
    server = SocketServer(engine, gate=gate, default_surface=surface, ready=warmup.index_ready, identity=identity)

    async def main() -> None:
        # catch stop signals from the first moment a client can see us
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            await serve(signals)

    async def serve(signals) -> None:
        # we hold the vault's writer lock, so a socket file here is a dead
        # daemon's leftover
        if sock_path.exists() or sock_path.is_symlink():
            sock_path.unlink()
        # the pid file first: whoever reaches the socket can find its owner
        write_atomic(pid_path(places, vault), mode=0o600, data=json.dumps({
            "pid": os.getpid(), "vault": str(vault), "socket": str(sock_path),
            "started_at": now_iso(), "version": __version__,
            "log": str(log_path(places, vault)),
        }).encode())
        try:
            listener = await anyio.create_unix_listener(sock_path, mode=0o600)
        except OSError as e:
            raise _ListenError(e) from e
        # a client whose runtime dir differs (another BRAIN_HOME or
        # XDG_RUNTIME_DIR) finds us through the vault's lock
        try:
            engine.lock.annotate(socket=str(sock_path))
        except OSError:
            log.warning("could not note the socket in the vault's lock", exc_info=True)
        log.info("listening on %s (pid %d, vault %s)", sock_path, os.getpid(), vault)
        if not foreground:
            _redirect_stdio(log_path(places, vault))
        warmup.start()
        accepting = anyio.CancelScope()

        async def accept(tg) -> None:
            with accepting:
                await server.serve(listener, tg)

        async with anyio.create_task_group() as tg:
            tg.start_soon(accept, tg)
            async for signum in signals:
                log.info("signal %d: draining %d call(s) in flight", signum, gate.running)
                break
            # stop accepting; connections already open keep being served
            # until the calls in flight are done
            accepting.cancel()
            with anyio.CancelScope(shield=True):
                done = await anyio.to_thread.run_sync(gate.close_and_wait, DRAIN_S)
                if not done:
                    log.warning("%d call(s) still running after %.0fs; stopping anyway", gate.running, DRAIN_S)
                # a finished call's answer may still be on its way to the socket
                with anyio.move_on_after(FLUSH_S):
                    while server.unanswered():
                        await anyio.sleep(0.01)
            tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    except _ListenError as le:
        e = le.args[0]
        msg = f"brain daemon: cannot listen on {sock_path}: {e.strerror or e}. Fix: check that {sock_path.parent} " \
              "is writable (or set BRAIN_HOME to a short path; socket paths must stay under ~100 bytes)."
        log.error(msg)
        print(msg, file=sys.stderr)
        return EXIT_FAILED
    finally:
        _remove_socket(sock_path)
        _remove_pid_file(places, vault)
    return EXIT_OK


def _dump_stacks_on_sigusr1(path: Path) -> None:
    """`kill -USR1 <pid>` writes every thread's stack to the log: a hung call can be diagnosed."""
    import faulthandler

    try:
        faulthandler.register(signal.SIGUSR1, file=open(path, "a"), all_threads=True)  # noqa: SIM115
    except (OSError, AttributeError, RuntimeError):
        pass


class _ListenError(Exception):
    pass


def _redirect_stdio(path: Path) -> None:
    """Point fds 0/1/2 away from whoever spawned us: stray output goes to the log."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        log.warning("could not redirect stdio to the log", exc_info=True)


def _remove_socket(sock_path: Path) -> None:
    # still ours: the writer lock is released only after this
    try:
        sock_path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        log.warning("could not remove %s", sock_path, exc_info=True)


def _remove_pid_file(places: Places, vault: Path) -> None:
    info = read_pid_file(places, vault)
    if info and info.get("pid") == os.getpid():
        pid_path(places, vault).unlink(missing_ok=True)


def run_stdio(places: Places, vault: Path, cfg: dict, surface: str) -> int:
    """`brain serve --no-daemon`: MCP over this process's stdio, engine in-process.

    This process becomes the vault's writer for as long as it serves; it
    refuses to start while a daemon owns the vault (use plain `brain serve`).
    """
    import anyio

    from .mcp import serve_stdio
    from ..protocol.caller import Caller
    from ...indexer.vault.brain_folder import BrainFolderError
    from ..vault_lock import VaultLocked

    vault = Path(vault).expanduser().resolve()
    if not vault.is_dir():  # never create the folder a typo names
        print(f"brain serve: the vault {vault} is not a folder. Fix: run `brain init PATH` with your notes "
              "folder (or point BRAIN_VAULT at it).", file=sys.stderr)
        return EXIT_FAILED
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="brain serve: %(levelname)s %(name)s: %(message)s")
    try:
        engine = open_engine(places, vault, cfg, "serve --no-daemon", lock_wait_s=2.0)
    except VaultLocked as e:
        print(f"brain serve: {e}. A daemon (or another server) already owns this vault; "
              "run `brain serve` without --no-daemon to talk to it.", file=sys.stderr)
        return EXIT_ALREADY_RUNNING
    warmup = Warmup(engine, watch=True, models=bool(config_mod.get(cfg, "embeddings.enabled")))
    try:
        warmup.start()
        from ..verbs.cursors import connection_namespace

        # one MCP host on this stdio: its own cursor namespace (docs/protocol.md §3.7)
        caller = Caller(remote=True, client_id="remote", transport="stdio", surface=surface,
                        connection=connection_namespace("stdio"))
        anyio.run(serve_stdio, engine, caller, warmup.index_ready, lambda: close_engine(engine, warmup))
    finally:
        close_engine(engine, warmup)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="brain-daemon", description="The brain daemon for one vault.")
    ap.add_argument("--vault", required=True)
    ap.add_argument("--foreground", action="store_true", help="also log to stderr")
    ns = ap.parse_args(argv)
    restrict_umask()
    turn_off_telemetry(os.environ)  # before the model loads: the libraries read it once, at start
    places = Places.from_env()
    cfg = config_mod.load(places.config_file)
    return run_daemon(places, Path(ns.vault), cfg, foreground=ns.foreground)


if __name__ == "__main__":
    sys.exit(main())
