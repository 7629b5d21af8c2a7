"""The vault's index: files and parsing, page tables and keyword search, embeddings and vectors.

Three packages, each with one job (docs/architecture.md, "Layers"):

    vault/       the user's folder: walking it, reading and writing its files
                 atomically, slugs, frontmatter, Markdown parsing, live sync
    embeddings/  the embedding model and the vectors built from it: loading
                 MiniLM, chunk and fact vectors, the build order, the model's
                 states as the wire names them
    pages/       the page tables (SQLite) and the keyword index (tantivy): what
                 a page search returns, and the VaultIndex that keeps both in
                 step with the vault

May import: only itself (and third-party libraries). Never `brain.daemon`,
the CLI or the hooks: the daemon builds on the indexer, not the other way.
Inside it: vault ← embeddings ← pages (each package may import the ones to
its left, never to its right)."""
