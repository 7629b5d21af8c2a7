"""The vault's index: files and parsing, page tables and keyword search, embeddings and vectors.

Four packages, each with one job (docs/architecture.md, "Layers"):

    vault/       the user's folder: walking it, reading and writing its files
                 atomically, slugs, frontmatter, Markdown parsing, live sync
    embeddings/  the embedding model and the vectors built from it: loading
                 MiniLM, chunk and fact vectors, the build order, the model's
                 states as the wire names them
    page_policy/ what both page backends share and that holds no connection:
                 the pages contract's values, the visibility predicate, query
                 terms, fusion, evidence and passage choice
    pages/       the embedded pages store: the page tables (SQLite) and the keyword index (tantivy): what
                 a page search returns, and the VaultIndex that keeps both in
                 step with the vault

May import: only itself (and third-party libraries). Never `brain.daemon`,
the CLI or the hooks: the daemon builds on the indexer, not the other way.
Inside it: vault ← page_policy, vault ← embeddings, and pages on top of all
three (a package never imports one it stands under)."""
