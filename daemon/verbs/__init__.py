"""The verbs: plain functions over an Engine that return plain dicts, one
module per verb, plus what they share (cards, gather, cursor namespaces, the delta
streams, synthesis, injectable text, entity slugs, and `steps`: page search,
dedup's similarity and the model's prefetch over the Engine contract).

May import: the protocol core, the store contracts (and the policy beside them),
the LLM providers, `brain.indexer.vault`, `brain.indexer.embeddings` and
`brain.indexer.page_policy`. Never a backend: the embedded stores
(`brain.daemon.facts`, `brain.indexer.pages`) or PostgreSQL.
Never a transport (the server's socket and MCP wiring, HTTP), the client
side, conformance or the CLI: a verb gets its Engine and Caller handed in."""
