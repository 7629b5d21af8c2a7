"""The pages store contract: pages, chunks, links, aliases, timeline and tags (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class PagesStore(Protocol):
    """What verbs and the CLI may ask of pages, chunks, links, aliases, timeline and tags."""
