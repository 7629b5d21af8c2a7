"""Page tools: put_page, get_page, list_pages, search, get_backlinks.

Plain functions over the engine's VaultIndex. Remote callers never see a
page whose frontmatter says `visibility: private`: to them it does not exist.
A refused write is `invalid_params` with the reason and the fix; a page that
changed since it was read is refused the same way, naming its current hash.
"""

from __future__ import annotations

from ...indexer.embeddings.search_modes import degraded_fields
from ...indexer.vault.vault_files import PageWriteError
from ..protocol.limits import LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX
from ..protocol.params import clamp_limit
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams, NotFound, Unavailable
from ..stores.engine import Engine


def _index(engine: Engine):
    if engine.index is None:
        raise Unavailable("The vault index is not open.",
                          "Start the daemon (`brain daemon start`) or run `brain index`, then retry.")
    return engine.index


def _not_found(slug: str) -> NotFound:
    return NotFound(f"No page with slug {slug!r}.",
                    "Call list_pages (or search) to find the slug; slugs are lowercase paths without .md, "
                    "e.g. \"people/alice-example\".")


def put_page(engine: Engine, args: dict, caller: Caller) -> dict:
    index = _index(engine)
    try:
        return index.put_page(args["slug"], args["content"], args.get("expected_hash"), remote=caller.remote)
    except PageWriteError as e:
        if e.kind == "read_only":
            raise Unavailable(e.message, e.fix) from None
        raise InvalidParams(e.message, e.fix, e.detail) from None


def get_page(engine: Engine, args: dict, caller: Caller) -> dict:
    try:
        page = _index(engine).get_page(args["slug"], remote=caller.remote)
    except PageWriteError as e:   # a page indexed as a stub (over the size limit)
        raise InvalidParams(e.message, e.fix) from None
    if page is None:
        raise _not_found(args["slug"])
    return page


def list_pages(engine: Engine, args: dict, caller: Caller) -> dict:
    limit = clamp_limit(args.get("limit"), LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX)
    pages = _index(engine).list_pages(args.get("prefix"), limit, remote=caller.remote)
    return {"pages": pages, "count": len(pages)}


def search(engine: Engine, args: dict, caller: Caller) -> dict:
    query = args["query"].strip()
    limit = clamp_limit(args.get("limit"), SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX)
    results, degraded_cause = engine.search_pages(query, limit, caller) if query else ([], None)
    body = {"results": results, **degraded_fields(degraded_cause)}
    engine.note_retrieved([r["slug"] for r in results])
    return body


def get_backlinks(engine: Engine, args: dict, caller: Caller) -> dict:
    links = _index(engine).backlinks(args["slug"], remote=caller.remote)
    if links is None:
        raise _not_found(args["slug"])
    return {"slug": args["slug"], "backlinks": links, "count": len(links)}
