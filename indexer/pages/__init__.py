"""The page tables (SQLite), the keyword index (tantivy), page search and the VaultIndex.

May import: itself, `brain.indexer.vault` and `brain.indexer.embeddings`."""
