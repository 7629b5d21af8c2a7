"""Surfaces as ceilings (docs/protocol.md §7).

A server serves one configured surface; on HTTP every client row may
narrow it. The effective surface of a request is the narrowest of the
server's ceiling and the client's row, computed again on every request, so
a rescope shows in the very next tools/list. Nothing here widens: a client
can only ask for less (`request_tools`), and only the operator
(`brain auth rescope-client`) can give a client back more, up to the ceiling.
"""

from __future__ import annotations

SURFACE_ORDER = ("verbs", "starter", "full")


def narrowest(*surfaces: str | None) -> str:
    """The narrowest of the given surfaces (None entries are ignored)."""
    given = [s for s in surfaces if s in SURFACE_ORDER]
    if not given:
        raise ValueError("no surface given")
    return min(given, key=SURFACE_ORDER.index)


def effective_surface(ceiling: str, row_surface: str | None) -> str:
    """What one client sees: its row's surface, never wider than the server's."""
    return narrowest(ceiling, row_surface)


def is_wider(a: str, b: str) -> bool:
    return SURFACE_ORDER.index(a) > SURFACE_ORDER.index(b)
