"""forget: expire a fact, keeping it in the audit trail (docs/protocol.md §3.5)."""

from __future__ import annotations

import re

from ..protocol.caller import Caller
from ..protocol.errors import NotFound
from ..protocol.version import PROTOCOL_VERSION
from ..stores.engine import Engine

# ASCII digits only (int() would also read "١" as 1), and no more than
# SQLite's INTEGER holds: longer ids cannot exist
_ID = re.compile(r"^[0-9]{1,18}$")


def _not_found(raw: str) -> NotFound:
    return NotFound(
        f"No fact with id {raw[:80]!r}.",
        "Pass the `id` that remember returned, or `facts[].fact_id` from recall (a number as a "
        "string, e.g. \"42\"); page slugs are not fact ids. Run recall with include_expired to "
        "see what exists.",
    )


def forget(engine: Engine, args: dict, caller: Caller) -> dict:
    raw = args["id"].strip()
    if not _ID.match(raw) or int(raw) <= 0:
        raise _not_found(raw)
    fid = int(raw)
    reason = (args.get("reason") or "").strip() or None
    # private facts do not exist for remote callers: same answer as unknown
    if engine.facts.get(fid, caller.viewer) is None:
        raise _not_found(raw)
    if args.get("dry_run") is True:
        return {"dry_run": True, "action": "forget", "id": raw, "protocol_version": PROTOCOL_VERSION}
    expired = engine.facts.expire(fid, reason)
    return {"id": raw, "expired": expired, "reason": reason,
            "protocol_version": PROTOCOL_VERSION}
