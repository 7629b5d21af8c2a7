"""Shared pieces for the vector tests: one real MiniLM per test process (the
daemon's onnxruntime one; the torch one only for the agreement test), and a
small writer of page/chunk rows into the real page tables (for testing the
vector layer on its own, below the indexer)."""

from __future__ import annotations

import hashlib
import threading

import pytest

_MODEL = None
_REFERENCE = None
_MODEL_LOCK = threading.Lock()


def shared_minilm():
    """The daemon's embedding model (onnxruntime over the shared export), loaded once per process.

    The first test process to need it exports the bundled model to ONNX
    (tens of seconds, once: conftest.MODEL_CACHE keeps it)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            from conftest import MODEL_CACHE

            from brain.indexer.embeddings.embedder import OnnxMiniLM
            from brain.indexer.embeddings.onnx_export import ensure

            from brain.indexer.embeddings.query_model import attach

            folder = ensure(models=MODEL_CACHE)
            # as the daemon loads it (runtimes.py): recall's queries by the int8 query model
            _MODEL = attach(OnnxMiniLM(folder), folder)
        return _MODEL


def shared_reference():
    """sentence-transformers on torch: what the daemon's vectors must agree with (~5 s, ~500 MB)."""
    global _REFERENCE
    with _MODEL_LOCK:
        if _REFERENCE is None:
            from brain.indexer.embeddings.embedder import MiniLMEmbedder

            _REFERENCE = MiniLMEmbedder()
        return _REFERENCE


@pytest.fixture(scope="session")
def minilm():
    return shared_minilm()


@pytest.fixture
def model_engine(vault, places, minilm):
    """An engine with the real model loaded, before the test runs."""
    from brain.daemon.server.vault_engine import VaultEngine

    e = VaultEngine(vault, places, {}, writer="test")
    e.load_models(background=False, embedder=minilm)
    yield e
    e.close()


def chunk_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ChunkTable:
    """Writes pages and their chunks the way the indexer does, and reports the
    change the way VaultIndex.on_chunks_changed does (added rows, removed ids)."""

    def __init__(self, db):
        self.db = db

    def put_page(self, slug: str, chunks: list[str], title: str | None = None):
        """Create or replace a page's chunks; returns (added_rows, removed_ids)."""
        title = title or slug.rsplit("/", 1)[-1]
        row = self.db.execute("SELECT id FROM pages WHERE slug=?", (slug,)).fetchone()
        if row is None:
            cur = self.db.execute(
                "INSERT INTO pages(slug, path, title, title_key, tail, updated_at, indexed_at) "
                "VALUES (?,?,?,?,?,?,?)",
                (slug, slug + ".md", title, title.lower(), slug.rsplit("/", 1)[-1],
                 "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
            )
            page_id = cur.lastrowid
        else:
            page_id = row[0]
        removed = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE page_id=?", (page_id,))]
        self.db.execute("DELETE FROM chunks WHERE page_id=?", (page_id,))
        added = []
        for i, text in enumerate(chunks):
            cur = self.db.execute(
                "INSERT INTO chunks(page_id, ord, heading, text, hash) VALUES (?,?,?,?,?)",
                (page_id, i, None, text, chunk_hash(text)),
            )
            added.append(self.db.execute("SELECT * FROM chunks WHERE id=?", (cur.lastrowid,)).fetchone())
        return added, removed

    def rename(self, old: str, new: str):
        """A rename that re-creates the chunk rows (new ids, same texts)."""
        texts = [r[0] for r in self.db.execute(
            "SELECT c.text FROM chunks c JOIN pages p ON p.id=c.page_id WHERE p.slug=? ORDER BY c.ord", (old,))]
        _, removed = self.delete_page(old)
        added, _ = self.put_page(new, texts)
        return added, removed

    def delete_page(self, slug: str):
        row = self.db.execute("SELECT id FROM pages WHERE slug=?", (slug,)).fetchone()
        if row is None:
            return [], []
        removed = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE page_id=?", (row[0],))]
        self.db.execute("DELETE FROM pages WHERE id=?", (row[0],))  # chunks cascade
        return [], removed

    def page_of(self, chunk_id: int) -> str | None:
        row = self.db.execute(
            "SELECT p.slug FROM chunks c JOIN pages p ON p.id=c.page_id WHERE c.id=?", (chunk_id,)).fetchone()
        return row[0] if row else None

    def distinct_hashes(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT DISTINCT hash FROM chunks")}
