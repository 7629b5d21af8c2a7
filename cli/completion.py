"""Values the shell completes, beside commands and flags: harness and MCP host names,
setting names and the values a setting takes (doctor areas: doctor.area_names, beside
the checks). Each function takes what was typed so far and returns the candidates
that start with it."""

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
