"""`brain facts move OLD NEW` and `brain facts unfiled`: where facts are filed, for the vault's owner.

docs/architecture.md, "Entity identity": a fact is filed under a name and
belongs to the page that name means now. When brain cannot follow a change
(a page rewritten and renamed at once, a name several pages share), these put
the facts where they belong, by a move record appended to the facts log.
"""

from __future__ import annotations

import json
import shlex
import sys

from . import route


def _call(tool: str, args: dict, json_out: bool) -> dict | None:
    """The daemon's answer for a person to read; None once it is printed (`--json`) or after
    an error was (then the command exits 1)."""
    import typer

    body, is_error = route.route_or_report(tool, args, no_daemon=False)
    if body is None:
        raise typer.Exit(1)
    if is_error:
        print(f"error: {body.get('message', body)}", file=sys.stderr)
        if body.get("suggestion"):
            print(f"fix: {body['suggestion']}", file=sys.stderr)
        raise typer.Exit(1)
    if json_out:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return None
    return body


def register(app) -> None:
    import typer

    facts_app = typer.Typer(help="Where facts are filed: move them to another entity, list the ones with no page.",
                            no_args_is_help=True)
    app.add_typer(facts_app, name="facts")

    @facts_app.command("move")
    def move_cmd(old: str = typer.Argument(..., metavar="OLD", help="the name or slug the facts are filed under"),
                 new: str = typer.Argument(..., metavar="NEW", help="the entity they are about: a slug, title or alias"),
                 json_out: bool = typer.Option(False, "--json", help="print the exact response")):
        """File every fact filed under OLD under NEW from now on.

        A move record is appended to the facts log; no past line is edited, so `brain facts move NEW OLD`
        undoes it."""
        body = _call("facts_move", {"from": old, "to": new}, json_out)
        if body is None:
            return
        n = body["facts"]
        print(f"{n} active fact{'s' if n != 1 else ''} filed under {body['moved_from']} now "
              f"belong{'' if n != 1 else 's'} to "
              f"{body['moved_to']}" + ("" if body["page_exists"] else " (no page has that slug yet)"))
        print(f"check: {shlex.join(['brain', 'entity', body['moved_to']])}")

    @facts_app.command("unfiled")
    def unfiled_cmd(json_out: bool = typer.Option(False, "--json", help="print the exact response")):
        """List the names facts are filed under that lead to no page, with the command that files them."""
        body = _call("facts_unfiled", {}, json_out)
        if body is None:
            return
        rows = body["unfiled"]
        if not rows:
            print("every fact filed under an entity belongs to a page")
            return
        for row in rows:
            n = row["active_facts"]
            line = f"{row['entity_slug']}: {n} active fact{'s' if n != 1 else ''}, no page"
            if row["near"]:
                line += f"; fix: {shlex.join(['brain', 'facts', 'move', row['entity_slug'], row['near'][0]])}"
            print(line)


def _entities_check(ctx):
    """Facts filed under a name that leads to no page (docs/architecture.md, "Entity identity")."""
    if ctx.vault is None or not ctx.vault.is_dir():
        return
    from ..daemon.facts.home_rows import unfiled_in_cache
    from .page_lookup import Pages

    pages = Pages.of(ctx.places, ctx.vault)
    unfiled = unfiled_in_cache(ctx.places.cache_dir(ctx.vault) / "facts.sqlite", pages.paths)
    if unfiled is None:
        return
    if not unfiled:
        yield ("ok", "facts without a page", "every fact filed under an entity belongs to a page")
        return
    for name, n in unfiled[:10]:
        yield ("info", "facts without a page",
               f"{n} active fact{'s' if n != 1 else ''} filed under {name}, which no page has: an entity with no page "
               f"yet, or a page brain could not follow. fix: `brain facts move {shlex.quote(name)} SLUG` files them "
               "under a page (`brain facts unfiled` suggests one), or make the page")
    if len(unfiled) > 10:
        yield ("info", "facts without a page", f"and {len(unfiled) - 10} more names: `brain facts unfiled` lists them")


def _register_check() -> None:
    from .doctor import check

    check("entities")(_entities_check)


_register_check()
