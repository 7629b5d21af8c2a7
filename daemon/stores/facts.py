"""The facts store contract: the facts logs, their projection and facts search (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class FactsStore(Protocol):
    """What verbs and the CLI may ask of the facts logs, their projection and facts search."""
