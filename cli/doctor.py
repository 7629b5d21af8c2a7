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

from . import backend

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


_MARK = {"ok": "✓", "warn": "!", "fail": "✗"}


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(area: str = typer.Argument(None, help="Run one area only."),
               json_out: bool = typer.Option(False, "--json", help="print the rows as JSON")):
        """Check the config, vault, daemon, indexes, model and integrations; each problem names its fix."""
        import json

        p = backend.places()
        cfg = backend.load_config(p)
        try:
            vault = backend.vault_path(p, cfg)
        except backend.NoVault:
            vault = None
        ctx = DoctorContext(p, cfg, vault)
        names = [area] if area else list(CHECKS)
        unknown = [n for n in names if n not in CHECKS]
        if unknown:
            typer.echo(f"error: no doctor area {unknown[0]!r}; areas: {', '.join(CHECKS)}", err=True)
            raise typer.Exit(2)
        rows = []
        for n in names:
            try:
                for status, name, detail in CHECKS[n](ctx):
                    rows.append({"area": n, "status": status, "check": name, "detail": detail})
            except Exception as e:  # a broken check is itself a finding
                rows.append({"area": n, "status": "fail", "check": n, "detail": f"check crashed: {e}"})
        if json_out:
            typer.echo(json.dumps(rows, indent=2))
        else:
            for r in rows:
                typer.echo(f"  {_MARK[r['status']]} [{r['area']}] {r['check']}: {r['detail']}")
        raise typer.Exit(1 if any(r["status"] == "fail" for r in rows) else 0)
