"""Facts: the append-only log in the vault (`log`, the record), the SQLite
projection rebuilt from it (`store`), its full-text search (`search`) and the
date words a fact is found by (`dates`).

May import: the protocol core, the store contracts it implements, `brain.indexer`,
`brain.daemon.private_files`.
Never a verb, a transport, the client side or the CLI."""
