"""The embedded pages store: page tables (SQLite), the keyword index (tantivy), page search and the VaultIndex.

May import: itself, `brain.indexer.page_policy`, `brain.indexer.vault` and `brain.indexer.embeddings`."""
