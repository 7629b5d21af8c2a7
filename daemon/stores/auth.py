"""The auth store contract: HTTP bearer tokens and OAuth clients (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class AuthStore(Protocol):
    """What verbs and the CLI may ask of HTTP bearer tokens and OAuth clients."""
