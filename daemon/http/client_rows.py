"""HTTP client rows and their surfaces: bearer tokens and OAuth clients side by side.

A client is a bearer token (its id is the token's name) or an OAuth client
(its id is `oauth:<client id>`, the delta-cursor namespace its calls carry).
Each row may hold a surface narrower than the server's ceiling; see
`surfaces` for how the effective surface is computed. The operator sets it
(`brain auth rescope-client`), a client may only narrow it (`request_tools`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .tokens import list_tokens, set_token_surface
from ..protocol.dispatch import unknown_tool_envelope
from .oauth_store import OAuthStore
from ..protocol.params import normalize_and_validate
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams, NotFound, ScopeDenied, VerbError
from ..protocol.surfaces import SURFACE_ORDER, is_wider, narrowest
from ..protocol.tools import ALL_TOOLS, surface_tools

OAUTH_PREFIX = "oauth:"


@dataclass(frozen=True)
class ClientRow:
    id: str
    kind: str  # "token" | "oauth"
    name: str
    scopes: str
    surface: str | None
    surface_set_by: str | None
    created_at: str


def list_clients(places) -> list[ClientRow]:
    rows = [ClientRow(t.name, "token", t.name, "read write" if t.can_write else "read", t.surface,
                      t.surface_set_by, t.created_at) for t in list_tokens(places)]
    snap = OAuthStore(places).snapshot()
    for cid, c in snap["clients"].items():
        scopes = (c.get("info") or {}).get("scope") or "read"
        rows.append(ClientRow(OAUTH_PREFIX + cid, "oauth", c.get("name", "?"), scopes, c.get("surface"),
                              c.get("surface_set_by"), c.get("created_at", "?")))
    return rows


def set_client_surface(places, client_id: str, surface: str | None, set_by: str) -> bool:
    """Set one client's row surface (None: back to the server's); False when no such client."""
    if surface is not None and surface not in SURFACE_ORDER:
        raise InvalidParams(f"unknown surface {surface!r}", f"Use one of {', '.join(SURFACE_ORDER)}.")
    if client_id.startswith(OAUTH_PREFIX):
        return OAuthStore(places).set_surface(client_id[len(OAUTH_PREFIX):], surface, set_by)
    return set_token_surface(places, client_id, surface, set_by)


def request_tools(places, arguments, caller: Caller) -> tuple[dict, bool]:
    """The `request_tools` meta-tool for an HTTP caller: narrow its own row, never widen it."""
    if "request_tools" not in {t.name for t in surface_tools(caller.surface)}:
        return unknown_tool_envelope("request_tools", caller.surface), True
    try:
        if not isinstance(arguments, (dict, type(None))):
            raise InvalidParams("arguments must be a JSON object", "Send {\"surface\": \"verbs\"}.")
        wanted = normalize_and_validate(ALL_TOOLS["request_tools"], arguments)["surface"]
        if is_wider(wanted, caller.surface):
            raise ScopeDenied(
                f"request_tools only narrows: this client sees the {caller.surface} surface and asked for {wanted}.",
                f"Ask the server's owner to run `brain auth rescope-client {caller.client_id} --surface {wanted}` "
                "(never wider than the server's own surface).")
        if wanted != caller.surface and not set_client_surface(places, caller.client_id, wanted, "client"):
            raise NotFound(f"no client row for {caller.client_id!r}", "Reconnect: the client may have been revoked.")
    except VerbError as e:
        return e.envelope(), True
    now = narrowest(wanted, caller.surface)
    return {"surface": now, "previous": caller.surface, "tools": [t.name for t in surface_tools(now)],
            "applies": "from the next request"}, False
