"""How a CLI command reaches the verbs: the daemon's socket, or in-process.

The CLI is the trusted-local lane. This module reads the environment and the
config file (the CLI is an entry point) and hides which path was taken.
"""

from __future__ import annotations

import os
import sys
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
