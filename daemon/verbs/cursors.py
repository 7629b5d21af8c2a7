"""delta's cursor namespaces: whose cursor a call reads and moves (docs/protocol.md §3.7).

The cursors themselves are kept by a CursorStore (daemon/stores/cursors.py),
which the engine holds.
"""

from __future__ import annotations

import hashlib
import secrets

from ..protocol.caller import Caller

MAX_KEY = 200


def bounded(value: str) -> str:
    """At most 200 characters; a longer value keeps a prefix and a digest, so two
    long ids never share a row just because they share a prefix."""
    if len(value) <= MAX_KEY:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return value[: MAX_KEY - len(digest) - 1] + "~" + digest


def connection_namespace(transport: str) -> str:
    """The cursor namespace of one connection whose client names no id (docs/protocol.md §3.7): its own,
    so a flood of id-less sessions elsewhere never evicts its cursors; it ends with the connection."""
    return f"{transport}:conn-{secrets.token_hex(8)}"


def cursor_namespace(caller: Caller) -> str:
    """Whose delta cursors a call reads and moves: the caller's namespace (`client_of`), except that a
    remote client naming no id has its connection's own."""
    ns = client_of(caller)
    return caller.connection if ns == "remote" and caller.connection else ns


def client_of(caller: Caller) -> str:
    """The cursor namespace: "local" (or "local:<id>") only for the trusted
    lane; a remote caller without its own id is "remote", and can never
    claim a local namespace."""
    cid = bounded((caller.client_id or "").strip())
    local = cid == "local" or cid.startswith("local:")
    if not caller.remote:
        return cid if local else "local"
    return cid if cid and not local else "remote"
