"""The daemon process: one per vault. Its lifecycle (`process`: lock,
start-up, shutdown; run as `python -m brain.daemon.server`), the engine that
owns a vault's stores and models (`engine`), the MCP wiring (`mcp`), the Unix
socket transport (`socket`) and the local usage log (`usage`, read by
`usage_stats`).

May import: the protocol core, facts, verbs, `brain.indexer`, the daemon's
config and places. Never the client side, the HTTP transport or the CLI."""
