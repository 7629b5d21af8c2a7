"""The cursors store contract: delta's per-caller cursors (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class CursorStore(Protocol):
    """What verbs and the CLI may ask of delta's per-caller cursors."""
