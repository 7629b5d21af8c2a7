"""Values the shell completes, beside commands and flags: harness and MCP host names,
setting names and the values a setting takes (doctor areas: doctor.area_names, beside
the checks), and the vault's page slugs and tags. Each function takes what was typed
so far and returns the candidates that start with it.

Slugs and tags come from the running daemon (its page list, and the page index it
keeps): a completion never starts a daemon, so with none running they complete to
nothing rather than make a keystroke wait for a whole index pass."""

from __future__ import annotations

import typer


def starting(incomplete: str, values) -> list[str]:
    return [v for v in values if v.startswith(incomplete or "")]


def harnesses(incomplete: str) -> list[str]:
    from ..hooks.harnesses import HARNESSES

    return starting(incomplete, HARNESSES)


def mcp_hosts(incomplete: str) -> list[str]:
    from ..hooks.mcp_files import FILE_HOSTS
    from ..hooks.mcp_register import MCP_HOSTS

    return starting(incomplete, [*MCP_HOSTS, *FILE_HOSTS])


def file_hosts(incomplete: str) -> list[str]:
    from ..hooks.mcp_files import FILE_HOSTS

    return starting(incomplete, FILE_HOSTS)


def scopes(incomplete: str) -> list[str]:
    return starting(incomplete, ("user", "project", "local"))


def setting_names(incomplete: str) -> list[str]:
    from ..daemon import config as config_mod

    return starting(incomplete, sorted(config_mod.DEFAULTS))


def setting_values(ctx: typer.Context, incomplete: str) -> list[str]:
    """The values the setting named before it takes, when they are a closed set."""
    from ..daemon import config as config_mod

    setting = config_mod.SETTINGS.get(ctx.params.get("key") or "")
    if setting is not None and setting.kind == "choice":
        return starting(incomplete, setting.choices)
    if setting is not None and setting.kind == "bool":
        return starting(incomplete, ("true", "false"))
    return []


def _running_daemon():
    """(places, vault) when a daemon answers for the configured vault; None otherwise."""
    from ..daemon.client.probe import try_connect
    from . import route

    try:
        p = route.places()
        vault = route.vault_path(p)
    except Exception:  # no vault, an unreadable config: nothing to offer
        return None
    sock = try_connect(p.socket_path(vault), timeout=0.3)
    if sock is None:
        return None
    sock.close()
    return p, vault


def page_slugs(ctx, param, incomplete: str) -> list[str]:
    """The slugs of the vault's pages that start with what was typed (`brain entity <TAB>`,
    `--entity`, `brain get`): the running daemon's list_pages."""
    from ..daemon.client.calls import send_if_running
    from . import route

    try:
        p = route.places()
        vault = route.vault_path(p)
    except Exception:
        return []
    args = {"limit": 1000, **({"prefix": incomplete} if incomplete else {})}
    got = send_if_running(p, vault, "list_pages", args)
    if got is None or got[1]:
        return []
    return sorted(starting(incomplete, [page["slug"] for page in got[0].get("pages") or []]))


def tags(ctx, param, incomplete: str) -> list[str]:
    """Tags of the vault's pages for `--tag` (comma-separated: the last one is completed),
    from the page index while its daemon runs."""
    found = _running_daemon()
    if found is None:
        return []
    from .page_lookup import Pages

    done, _, last = (incomplete or "").rpartition(",")
    head = done + "," if done else ""
    return [head + t for t in starting(last.lstrip("#"), Pages.of(*found).all_tags())]
