"""The daemon process: one per vault. Its lifecycle (`process`: lock,
start-up, shutdown; run as `python -m brain.daemon.server`), the two
implementations of the Engine contract (`vault_engine`: one vault's stores and
models; `store_engine`: a front end's over a shared store), delta's cursors in SQLite
(`cursor_store`), the MCP wiring (`mcp`), the Unix
socket transport (`socket`), checked stdio lines for `serve --no-daemon`
(`stdio_lines`) and the local usage log (`usage`, read by
`usage_stats`).

May import: the protocol core, the store contracts, facts, the PostgreSQL backend
(opened when a store URL is given), verbs, the LLM providers,
`brain.indexer`, the daemon's shared modules (config, places, private_files,
vault_lock, rendezvous, line_log). Never the client side, the HTTP transport
or the CLI: what the daemon and its clients both know of the pid file, logs
and handshake is in `brain.daemon.rendezvous`."""
