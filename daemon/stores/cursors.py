"""The cursors store contract: delta's per-caller cursors (docs/architecture.md, "Stores").

A cursor is where one caller's session last woke up: a keyset per stream, so
a wake that stopped early resumes exactly where delivery stopped
(docs/protocol.md §3.7). The store fails open: a store it cannot read or
write answers as if there were no cursor, and never makes delta fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Cursor:
    since: str               # pages keyset: updated_at ...
    slug: str | None         # ... and slug ("" = the whole bucket at since, None = strictly after it)
    facts_since: str         # facts keyset: created_at ...
    facts_id: int | None     # ... and id (None = strictly after facts_since)


@runtime_checkable
class CursorStore(Protocol):
    """What verbs and the CLI may ask of delta's per-caller cursors.

    `client_id` is the caller's namespace (verbs/cursors.py `client_of`): a
    caller never reads or moves another namespace's cursor.
    """

    def get(self, client_id: str, session_id: str) -> Cursor | None:
        """The session's cursor; None when there is none, or the store cannot be read."""
        ...

    def put(self, client_id: str, session_id: str, cursor: Cursor) -> bool:
        """Set the session's cursor (last writer wins); False when the store cannot be written."""
        ...

    def gc(self) -> int:
        """Remove cursors idle for more than seven days; how many went (0 when the store fails)."""
        ...
