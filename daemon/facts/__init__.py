"""Facts: the append-only log in the vault (`log`, the record), the SQLite
projection rebuilt from it (`store`, `SqliteFactsStore`) and what the shared
ranking reads of it (`search`): the embedded implementation of the facts contract; the policy it shares with the
PostgreSQL store (`daemon/stores/fact_*`) lives at the contracts floor.

May import: the protocol core, the store contracts it implements (and the facts
policy beside them), `brain.indexer.vault`, `brain.indexer.embeddings`,
`brain.daemon.private_files`. Never its peer backend (PostgreSQL).
Never a verb, a transport, the client side or the CLI."""
