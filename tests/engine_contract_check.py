"""Both engines satisfy the Engine contract verbs are handed (daemon/stores/engine.py).

Read by mypy through tests/test_types.py, never run: an engine that lacks a
member the contract declares, or types one otherwise, fails that test.
"""

from __future__ import annotations

from brain.daemon.server.store_engine import StoreEngine
from brain.daemon.server.vault_engine import VaultEngine
from brain.daemon.stores.engine import Engine


def the_embedded_engine(engine: VaultEngine) -> Engine:
    return engine


def a_front_ends_engine(engine: StoreEngine) -> Engine:
    return engine
