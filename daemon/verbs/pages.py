"""Page tools: put_page, get_page, list_pages, search, get_backlinks.

Plain functions over the engine's pages store (daemon/stores/pages.py), each
given the caller's viewer; they answer once the vault index is open. Remote
callers never see a page whose frontmatter says `visibility: private`: to
them it does not exist.
A refused write is `invalid_params` with the reason and the fix; a page that
changed since it was read is refused the same way, naming its current hash.
"""

from __future__ import annotations

from ...indexer.embeddings.search_modes import degraded_fields
from ...indexer.vault.vault_files import PageWriteError
from ..protocol.limits import LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX
from ..protocol.params import clamp_limit
from ..protocol.caller import Caller
from ..stores.engine import Engine
from . import steps
from ..protocol.errors import InvalidParams, NotFound, Unavailable
from ..stores.pages import PagesStore


def _pages(engine: Engine) -> PagesStore:
    if engine.index is None:
        raise Unavailable("The vault index is not open.",
                          "Start the daemon (`brain daemon start`) or run `brain index`, then retry.")
    return engine.pages


def _not_found(slug: str) -> NotFound:
    return NotFound(f"No page with slug {slug!r}.",
                    "Call list_pages (or search) to find the slug; slugs are lowercase paths without .md, "
                    "e.g. \"people/alice-example\".")


def put_page(engine: Engine, args: dict, caller: Caller) -> dict:
    pages = _pages(engine)
    try:
        return dict(pages.put_page(args["slug"], args["content"], args.get("expected_hash"), caller.viewer))
    except PageWriteError as e:
        if e.kind == "read_only":
            raise Unavailable(e.message, e.fix) from None
        raise InvalidParams(e.message, e.fix, e.detail) from None


def get_page(engine: Engine, args: dict, caller: Caller) -> dict:
    try:
        pages = _pages(engine)
        page = pages.get_page(args["slug"], caller.viewer)
        if page is None and not _shared_name(pages, args["slug"], caller):
            # the names `entity` takes (an alias, a title, a moved page's old slug) name a page here too
            # (docs/architecture.md, "Entity identity")
            named = steps.canonical_entity(engine, args["slug"], caller)
            if named and named != args["slug"]:
                page = pages.get_page(named, caller.viewer)
    except PageWriteError as e:   # a page indexed as a stub (over the size limit)
        raise InvalidParams(e.message, e.fix) from None
    if page is None:
        raise _not_found(args["slug"])
    return dict(page)


def _shared_name(pages: PagesStore, name: str, caller: Caller) -> bool:
    """Whether two pages the caller may see have `name` as their title or alias: never guessed."""
    return len(pages.titled(name, caller.viewer, 2)) > 1 or len(pages.resolve_alias(name, caller.viewer)) > 1


def list_pages(engine: Engine, args: dict, caller: Caller) -> dict:
    limit = clamp_limit(args.get("limit"), LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX)
    pages = _pages(engine).list_pages(args.get("prefix"), limit, caller.viewer)
    return {"pages": pages, "count": len(pages)}


def search(engine: Engine, args: dict, caller: Caller) -> dict:
    query = args["query"].strip()
    limit = clamp_limit(args.get("limit"), SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX)
    results, degraded_cause = steps.find_pages(engine, query, limit, caller) if query else ([], None)
    body = {"results": results, **degraded_fields(degraded_cause)}
    steps.note_retrieved(engine, [r["slug"] for r in results])
    return body


def get_backlinks(engine: Engine, args: dict, caller: Caller) -> dict:
    links = _pages(engine).backlinks(args["slug"], caller.viewer)
    if links is None:
        raise _not_found(args["slug"])
    return {"slug": args["slug"], "backlinks": links, "count": len(links)}
