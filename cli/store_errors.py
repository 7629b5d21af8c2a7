"""Opening a shared store from the CLI, with the fix when it cannot be opened (docs/scaling.md)."""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

T = TypeVar("T")

EXTRA_FIX = "install the PostgreSQL extra: `.venv/bin/pip install -e '.[postgres]'` (or `./install.sh --postgres`)"


def open_or_explain(prog: str, opener: Callable[[], T]) -> T | None:
    """`opener()`, or None after saying on stderr why the store could not be opened and what to do."""
    try:
        return opener()
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("psycopg", "psycopg_binary", "psycopg_pool"):
            raise
        print(f"{prog}: error: a PostgreSQL store needs the `postgres` extra, which is not installed.",
              file=sys.stderr)
        print(f"fix: {EXTRA_FIX}", file=sys.stderr)
        return None
    except Exception as e:  # the driver's own errors: a refused connection, a bad password, no pgvector
        from brain.daemon.postgres.open_store import StoreUnavailable

        if not isinstance(e, StoreUnavailable):
            raise
        print(f"{prog}: error: {e}", file=sys.stderr)
        if e.fix:
            print(f"fix: {e.fix}", file=sys.stderr)
        return None
