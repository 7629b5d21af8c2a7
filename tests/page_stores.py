"""Both pages stores over one real vault, for tests that hold them to the same answers."""

from __future__ import annotations

from typing import Callable

import pytest

from pg_fixtures import pg_pages_store


def both_page_stores(write_vault: Callable) -> Callable:
    """A `pages` fixture: the embedded store (the engine's, index open) and the PostgreSQL one (loaded
    by its vault indexer; skipped only without the `postgres` extra), each over a vault `write_vault` fills.
    The test module imports `open_index` from indexer_fixtures for it."""

    @pytest.fixture(params=["embedded", "postgres"])
    def pages(vault, open_index, request):
        write_vault(vault)
        if request.param == "embedded":
            return open_index(vault).pages
        store = pg_pages_store(vault, request.getfixturevalue("pg_dsn"))
        request.addfinalizer(store.close)
        return store

    return pages
