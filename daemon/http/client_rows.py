"""HTTP client rows and their surfaces: bearer tokens and OAuth clients side by side.

A client is a bearer token (its id is the token's name) or an OAuth client
(its id is `oauth:<client id>`, the delta-cursor namespace its calls carry).
Each row may hold a surface narrower than the server's ceiling; see
`surfaces` for how the effective surface is computed. The operator sets it
(`brain auth rescope-client`), a client may only narrow it (`request_tools`).
`brain auth clients` shows each row as granted: the scopes its live
credentials carry and the surface it sees under the running server's
ceiling (which `brain serve --http` records while it runs).
"""

from __future__ import annotations

import os
import time

from .tokens import list_tokens, set_token_surface
from ..protocol.dispatch import unknown_tool_envelope
from .oauth_store import SCOPES, OAuthStore
from .state_file import StateFileError, load_json, save_json
from ..protocol.params import normalize_and_validate
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams, NotFound, ScopeDenied, VerbError
from ..protocol.surfaces import SURFACE_ORDER, effective_surface, is_wider, narrowest
from ..protocol.tools import ALL_TOOLS, surface_tools
from ..stores.auth import ClientRow

OAUTH_PREFIX = "oauth:"


def _scope_text(scopes) -> str:
    have = set(scopes)
    return " ".join(s for s in SCOPES if s in have)


def list_clients(places, ceiling: str) -> list[ClientRow]:
    """Every HTTP client with what it was granted and the surface it sees under `ceiling`."""
    rows = []
    for t in list_tokens(places):
        scopes = "read write" if t.can_write else "read"
        rows.append(ClientRow(t.name, "token", t.name, scopes, scopes, t.surface, t.surface_set_by,
                              effective_surface(ceiling, t.surface), t.created_at))
    snap = OAuthStore(places).snapshot()
    now = time.time()
    for cid, c in snap["clients"].items():
        live = [g["scopes"] for kind in ("access", "refresh") for g in snap[kind].values()
                if g.get("client_id") == cid and g.get("expires_at", 0) >= now]
        asked = (c.get("info") or {}).get("scope") or "read"
        rows.append(ClientRow(OAUTH_PREFIX + cid, "oauth", c.get("name", "?"),
                              _scope_text(s for scopes in live for s in scopes), asked, c.get("surface"),
                              c.get("surface_set_by"), effective_surface(ceiling, c.get("surface")),
                              c.get("created_at", "?")))
    return rows


def serving_file(places):
    return places.state_dir / "http_serving.json"


def note_serving(places, surface: str, url: str) -> None:
    """Record the running HTTP server's surface, the ceiling `brain auth clients` reports against."""
    save_json(serving_file(places), {"pid": os.getpid(), "surface": surface, "url": url})


def forget_serving(places) -> None:
    try:
        if load_json(serving_file(places), {}).get("pid") == os.getpid():
            serving_file(places).unlink()
    except (OSError, StateFileError):
        pass


def server_ceiling(places, configured: str) -> tuple[str, str]:
    """(surface, where it comes from): the running HTTP server's, else the configured one."""
    try:
        row = load_json(serving_file(places), {})
        os.kill(int(row["pid"]), 0)
        if row.get("surface") in SURFACE_ORDER:
            return row["surface"], f"the HTTP server at {row.get('url', '?')}"
    except (OSError, StateFileError, KeyError, TypeError, ValueError):
        pass
    return configured, "config mcp_surface (no HTTP server runs)"


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
