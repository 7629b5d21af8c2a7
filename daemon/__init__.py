"""Everything that speaks the protocol, in packages (docs/architecture.md,
"Layers"): `protocol`, `facts`, `verbs`, `server`, `http`, `client`,
`conformance`, `llm`; each package's docstring says what it may import.

The modules at this level are shared by the daemon and its clients: settings
(`config`), where files live (`places`), file modes (`private_files`), the
writer lock (`vault_lock`), what the daemon and a client both know of its pid
file, logs and identity handshake (`rendezvous`) and the small rotated line
logs (`line_log`). They may import each other, the protocol core's `wire` and
`brain.indexer`; never facts, a verb, the server, HTTP, the client side,
conformance or the CLI."""
