"""`brain serve --http`: Streamable HTTP MCP in front of the daemon (`serve`),
its connection limits (`limits`), one daemon connection per HTTP session
(`daemon_link`), and who may call it: bearer tokens (`tokens`), OAuth 2.1
(`oauth_store`, `oauth_provider`, `oauth_approval`) and per-client surfaces
(`client_rows`), kept in small shared JSON files (`state_file`); the auth
store contract over them (`auth_store`, daemon/stores/auth.py).

May import: the protocol core, the store contracts, the server's MCP wiring (`server.mcp`), the
client side's socket helpers, the daemon's shared modules, `brain.indexer`'s
atomic writes. Never a verb, the rest of the server or the CLI."""
