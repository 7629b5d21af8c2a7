"""How a CLI command reaches the verbs: the daemon's socket, or in-process.

The CLI is the trusted-local lane. This module reads the environment and the
config file (the CLI is an entry point) and hides which path was taken.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from ..daemon import config as config_mod
from ..daemon.places import Places


class NoVault(RuntimeError):
    pass


def places() -> Places:
    return Places.from_env()


def load_config(p: Places | None = None) -> dict:
    return config_mod.load((p or places()).config_file)


def vault_path(p: Places | None = None, cfg: dict | None = None) -> Path:
    env = os.environ.get("BRAIN_VAULT")
    if env:
        return Path(env).expanduser().resolve()
    cfg = load_config(p) if cfg is None else cfg
    v = cfg.get("vault")
    if not v:
        raise NoVault(
            "No vault is configured. Run `brain init PATH` to register a folder of Markdown notes "
            "(or set BRAIN_VAULT=PATH)."
        )
    return Path(v).expanduser().resolve()


def route_call(verb: str, args: dict, *, no_daemon: bool = False, remote: str | None = None) -> tuple[dict, bool]:
    """Run one tool call as the trusted local lane (or on the remote brain named `remote`);
    returns (body, is_error)."""
    p = places()
    cfg = load_config(p)
    if remote:
        from .remotes import send_remote

        return send_remote(p, cfg, remote, verb, args)
    vault = vault_path(p, cfg)
    if not vault.is_dir():  # never create the folder a typo names
        raise NoVault(f"the vault {vault} is not a folder.\nfix: run `brain init PATH` with your notes folder "
                      "(or point BRAIN_VAULT at it).")
    if not no_daemon:
        from ..daemon.client.calls import send  # the socket lane

        return send(p, vault, verb, args)
    return dispatch_in_process(p, vault, cfg, verb, args)


def call_or_read_caches(verb: str, args: dict, pending: dict | None = None) -> tuple[dict, bool, str]:
    """route_call for a caller that cannot wait for a daemon to start (the session-start hook,
    docs/architecture.md "Processes"): (body, is_error, lane). With the daemon up it
    answers ("daemon"). Without it, a daemon is started in the background for the next call
    and the caches it left on disk answer now ("caches"): read-only, the page index as last
    reconciled, keyword-only, no model. A vault never indexed has no caches: then this waits
    for the daemon as route_call does ("daemon"). While the caches are read, `pending` holds
    "start_daemon": a caller whose deadline passes first calls it (once) before leaving."""
    p = places()
    cfg = load_config(p)
    vault = vault_path(p, cfg)
    if not vault.is_dir():
        raise NoVault(f"the vault {vault} is not a folder.")
    from ..daemon.client.probe import try_connect

    up = try_connect(p.socket_path(vault), timeout=0.5)
    if up is not None or not has_indexed_pages(p.cache_dir(vault) / "index.sqlite"):
        if up is not None:
            up.close()
        return (*route_call(verb, args), "daemon")
    from ..daemon.client.spawn import start_daemon

    pending = {} if pending is None else pending
    once = threading.Lock()

    def start() -> None:
        if once.acquire(blocking=False):
            try:
                start_daemon(p, vault)   # detached; it settles with any other starter through the vault lock
            except OSError:
                pass                     # the caches answer all the same; the next call starts it

    pending["start_daemon"] = start
    try:
        # the answer first: a daemon starting beside it competes for the CPU the deadline counts
        return (*read_caches(p, vault, cfg, verb, args), "caches")
    finally:
        start()


def has_indexed_pages(index_db: Path) -> bool:
    """Whether a daemon (or `brain index`) has indexed pages into this cache: a `--no-daemon`
    call leaves the file with empty tables."""
    import sqlite3

    if not index_db.is_file():
        return False
    try:
        db = sqlite3.connect(f"file:{index_db}?mode=ro", uri=True, timeout=0.2)
        try:
            return db.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False


def read_caches(p: Places, vault: Path, cfg: dict, verb: str, args: dict) -> tuple[dict, bool]:
    """One read-only call answered from the caches as they are: no writer lock, no reconcile
    of the folder, no model (a starting daemon may hold the lock and be reconciling)."""
    from ..daemon.protocol.caller import Caller
    from ..daemon.protocol.dispatch import dispatch
    from ..daemon.server.vault_engine import VaultEngine

    engine = VaultEngine(vault, p, {**cfg, "embeddings.enabled": False}, writer=None)
    try:
        return dispatch(engine, verb, args, Caller.local("cli"))
    finally:
        engine.close()


def route_or_report(tool: str, args: dict, no_daemon: bool, remote: str | None = None) -> tuple[dict | None, bool]:
    """route_call for a command: (None, True) after printing why the call could not be made."""
    try:
        return route_call(tool, args, no_daemon=no_daemon, remote=remote)
    except Exception as e:  # no vault, or the daemon or the vault is broken: say so plainly
        print(f"error: {e}", file=sys.stderr)
        return None, True


def dispatch_in_process(p: Places, vault: Path, cfg: dict, verb: str, args: dict) -> tuple[dict, bool]:
    from ..daemon.protocol.dispatch import dispatch
    from ..daemon.protocol.tools import REGISTRY
    from ..daemon.server.vault_engine import VaultEngine
    from ..daemon.protocol.caller import Caller

    tool = REGISTRY.get(verb)
    llm = None
    if verb == "synthesize":  # only entry points read API keys from the environment
        from ..daemon.llm.providers import provider_from_config

        llm = provider_from_config(cfg, os.environ)
    engine = VaultEngine(vault, p, cfg, writer="cli" if tool is not None and tool.writes else None, llm=llm)
    try:
        # reconcile first, so the answer reflects the folder as it is now (recall reads pages only with a query)
        if tool is not None and tool.reads_pages and (verb != "recall" or str(args.get("query") or "").strip()):
            engine.attach_index()
        return dispatch(engine, verb, args, Caller.local("cli"))
    finally:
        engine.close()
