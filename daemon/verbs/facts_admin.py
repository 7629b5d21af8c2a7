"""The owner's tools for where facts are filed: `brain facts move` and `brain facts unfiled`.

These are not MCP tools: no listing shows them and a remote caller gets the
same unknown-tool answer as for a name that does not exist (protocol/dispatch.py,
OWNER_TOOLS); only the trusted local lane (the `brain` command line) reaches
them. docs/architecture.md, "Entity identity".
"""

from __future__ import annotations

from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams, Unavailable
from ..protocol.version import PROTOCOL_VERSION
from ..stores.engine import Engine
from ..stores.facts import MAX_MOVE_SLUG_CHARS, MOVED_BY_USER
from ...indexer.vault.slugs import name_slug
from ...indexer.vault.visibility import Viewer


def _slug_arg(args: dict, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(f"{key} is missing.", "Pass the entity as a slug (people/lisa-park) or a name.")
    raw = value.strip()
    slug = name_slug(raw)
    if not slug or len(slug) > MAX_MOVE_SLUG_CHARS:
        raise InvalidParams(f"{key} {raw!r} is not a slug brain can file facts under.",
                            "Pass a page's slug, e.g. people/lisa-park (`brain facts unfiled` lists the names).")
    return slug


def facts_move(engine: Engine, args: dict, caller: Caller) -> dict:
    """File every fact under `from` (a name or old slug) under `to` from now on, by a move record
    appended to this device's facts log; the log lines that filed them stay as they are."""
    src = _slug_arg(args, "from")
    dst_raw = str(args.get("to") or "").strip()
    dst = engine.pages.resolve_entity(dst_raw, caller.viewer) if dst_raw else None
    dst = dst or _slug_arg(args, "to")
    if src == dst:
        raise InvalidParams(f"{src} and {dst} are the same entity.", "Name two different entities.")
    before = engine.facts.count_filed(src, caller.viewer)
    if not engine.facts.record_moves([(src, dst)], why=MOVED_BY_USER):
        raise Unavailable("this brain's facts store does not move facts between entities",
                          "run `brain facts move` on the vault's own brain (docs/scaling.md)")
    has_page = engine.pages.page_ref(dst, Viewer.owner()) is not None
    return {"moved_from": src, "moved_to": dst, "facts": before, "page_exists": has_page,
            "protocol_version": PROTOCOL_VERSION}


def facts_unfiled(engine: Engine, args: dict, caller: Caller) -> dict:
    """The names facts are filed under that lead to no page, each with how many active facts
    it holds and the pages its name is near."""
    out = []
    for name, count in engine.facts.filed_without_page(caller.viewer):
        near = [h.slug for h in engine.pages.resolve_name(name.rsplit("/", 1)[-1].replace("-", " "), Viewer.owner())[:3]]
        out.append({"entity_slug": name, "active_facts": count, "near": near})
    return {"unfiled": out, "protocol_version": PROTOCOL_VERSION}
