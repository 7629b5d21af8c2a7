"""The PostgreSQL schema (daemon/postgres/schema.py) on a real server with pgvector:
migrations apply on an empty database, a second start changes nothing, and
front ends starting at once do not race."""

from __future__ import annotations

import threading

import pytest

psycopg = pytest.importorskip("psycopg")


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def test_migrations_build_every_table_on_an_empty_database(pg_dsn):
    from brain.daemon.postgres import schema

    with psycopg.connect(pg_dsn) as conn:
        assert schema.version(conn) == 0
        assert schema.migrate(conn) == schema.LATEST
        assert schema.version(conn) == schema.LATEST
        assert {"pages", "aliases", "links", "timeline", "chunks", "problems", "facts", "call_keys",
                "fact_vectors", "cursors", "auth_tokens", "oauth_clients", "oauth_grants",
                "schema_migrations"} <= _tables(conn)
        # the vector column and its HNSW index on cosine distance are really there
        kind = conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                            "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'").fetchone()[0]
        assert kind == f"vector({schema.VECTOR_DIM})"
        index = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding'").fetchone()[0]
        assert "hnsw" in index and "vector_cosine_ops" in index


def test_migrating_again_changes_nothing(pg_dsn):
    from brain.daemon.postgres import schema

    with psycopg.connect(pg_dsn) as conn:
        schema.migrate(conn)
        conn.execute("INSERT INTO pages (slug, path, title, title_key, tail, updated_at, indexed_at) "
                     "VALUES ('a', 'a.md', 'A', 'a', 'a', 'now', 'now')")
        conn.commit()
        applied = conn.execute("SELECT version, applied_at FROM schema_migrations ORDER BY version").fetchall()
        schema.migrate(conn)
        assert conn.execute("SELECT version, applied_at FROM schema_migrations ORDER BY version").fetchall() == applied
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 1


def test_front_ends_starting_at_once_apply_each_migration_once(pg_dsn):
    from brain.daemon.postgres import schema

    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def front_end():
        try:
            with psycopg.connect(pg_dsn) as conn:
                start.wait(timeout=30)
                schema.migrate(conn)
        except BaseException as e:   # every thread's failure is the test's failure
            errors.append(e)

    threads = [threading.Thread(target=front_end) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    with psycopg.connect(pg_dsn) as conn:
        assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")] == \
            sorted(schema.MIGRATIONS)


def test_a_database_newer_than_this_code_is_refused(pg_dsn):
    from brain.daemon.postgres import schema

    with psycopg.connect(pg_dsn) as conn:
        schema.migrate(conn)
        conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (schema.LATEST + 1,))
        conn.commit()
        with pytest.raises(RuntimeError, match="upgrade brain"):
            schema.migrate(conn)


def test_a_front_end_on_a_newer_database_answers_unavailable_with_the_fix(pg_dsn):
    # a rolling upgrade: the indexer's newer brain migrated the store before this front end's
    import psycopg

    from brain.daemon.protocol.errors import Unavailable
    from brain.daemon.stores.facts import FactScope
    from brain.daemon.postgres import schema
    from brain.daemon.postgres.facts_store import PgFactsStore
    from brain.daemon.postgres.open_store import StoreUnavailable, check
    from brain.indexer.vault.visibility import Viewer

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        schema.migrate(conn)
        conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (schema.LATEST + 1000,))
    store = PgFactsStore(pg_dsn)
    try:
        with pytest.raises(Unavailable) as refused:
            store.count(FactScope(), Viewer.owner(), 10)
        assert "upgrade brain" in refused.value.suggestion.lower()
    finally:
        store.close()
    with pytest.raises(StoreUnavailable) as cli:
        check(pg_dsn)
    assert "upgrade brain" in (cli.value.fix or "")


def test_a_lower_version_added_later_is_still_applied(pg_dsn):
    """Versions are numbered in ranges (facts, cursors and auth 10-19; pages 20 and up): a
    database migrated without one of them gets it at the next start."""
    from brain.daemon.postgres import schema

    with psycopg.connect(pg_dsn) as conn:
        schema.migrate(conn)
        conn.execute("DELETE FROM schema_migrations WHERE version = 10")
        conn.execute("DROP TABLE oauth_pending")
        conn.execute("ALTER TABLE call_keys DROP CONSTRAINT call_keys_fact")
        conn.execute("DROP INDEX call_keys_fact_id")
        conn.execute("ALTER TABLE facts DROP COLUMN folded, DROP COLUMN change")
        conn.execute("DROP SEQUENCE facts_change_seq")
        conn.execute("ALTER TABLE facts ALTER COLUMN id DROP DEFAULT")
        conn.execute("DROP SEQUENCE facts_id_seq")
        conn.commit()
        schema.migrate(conn)
        assert 10 in {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        assert "oauth_pending" in _tables(conn)
