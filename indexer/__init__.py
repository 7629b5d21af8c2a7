"""The vault: slugs, Markdown parsing, page tables, keyword and vector search, sync.

May import: only itself (and third-party libraries). Never `brain.daemon`,
the CLI or the hooks: the daemon builds on the indexer, not the other way."""
