"""The embedding model and its vectors: loading MiniLM, chunk and fact vectors, the build order.

May import: itself and `brain.indexer.vault`."""
