"""The Engine a verb is handed: the stores, the models and the clocks (docs/architecture.md, "Stores")."""

from __future__ import annotations

from typing import Protocol


class Engine(Protocol):
    """What a verb may use. The daemon's engine (daemon/server/engine.py) is the implementation."""
