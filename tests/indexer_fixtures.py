"""Helpers for the indexer tests: small vaults written file by file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest


def write(vault: Path, rel: str, text: str | bytes) -> Path:
    p = vault / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def bump_mtime(path: Path, seconds: float = 2.0) -> None:
    """Move a file's mtime forward so a same-size rewrite is noticed by stat."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + int(seconds * 1e9)))


def page(db, slug: str):
    return db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()


def links_of(db, slug: str) -> list[tuple]:
    return [tuple(r) for r in db.execute(
        "SELECT l.target, t.slug, l.type, l.source FROM links l JOIN pages f ON f.id = l.from_id "
        "LEFT JOIN pages t ON t.id = l.to_id WHERE f.slug = ? ORDER BY l.id", (slug,))]


def wait_for(predicate, timeout: float = 10.0, step: float = 0.02):
    """Poll until predicate() is truthy (the watcher is asynchronous); returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


@pytest.fixture
def open_index(places):
    """open_index(vault, watch=False) → an Engine with the index attached; closed after the test."""
    from brain.daemon.server.vault_engine import VaultEngine

    engines = []

    def _open(vault: Path, watch: bool = False, **sync_kw):
        e = VaultEngine(vault, places, {}, writer="test")
        engines.append(e)
        e.attach_index()
        if watch:
            e.index.start_watching(**sync_kw)
        return e

    yield _open
    for e in engines:
        e.close()
