"""The vectors store contract: chunk and fact vectors (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class VectorsStore(Protocol):
    """What verbs and the CLI may ask of chunk and fact vectors."""
