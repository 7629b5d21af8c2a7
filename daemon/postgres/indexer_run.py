"""The indexer process of a PostgreSQL deployment: one vault kept in one database.

    python -m brain.daemon.postgres.indexer_run VAULT URL [--watch]

`index_vault` is what `brain index --store URL` (one pass) and `brain index
--watch --store URL` (one pass, then follow saves until stopped) are to run:
the schema migrated, the whole vault reconciled into the page tables
(indexer.py), every chunk given its vector when a model is passed
(chunk_vectors.py), then, watching, each save re-indexed within a moment and
its new chunks embedded. Exactly one such process writes a deployment's
pages; front ends only read them (and write through put_page, which takes
the same advisory lock), docs/scaling.md "A team brain on PostgreSQL".
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Callable

from ...indexer.vault.indexing_pass import Progress, Report
from ..stores.vectors import TextEmbedder
from .chunk_vectors import PgChunkVectors
from .indexer import PgVaultIndexer

log = logging.getLogger("brain.indexer.postgres")


def index_vault(vault: Path, dsn: str, *, embedder: TextEmbedder | None = None, watch: bool = False,
                stop: threading.Event | None = None, progress: Progress | None = None,
                on_ready: Callable[[Report], None] | None = None) -> Report:
    """Reconcile `vault` into the database at `dsn` (and embed its chunks with `embedder`); with
    `watch`, keep following saves until `stop` is set. Returns the first pass's report."""
    indexer = PgVaultIndexer(vault, dsn)
    vectors = PgChunkVectors(dsn, embedder) if embedder is not None else None
    try:
        if vectors is not None:
            indexer.on_chunks_changed.append(vectors.on_chunks_changed)
        if watch:   # before the first pass: a save made during it is applied right after it
            indexer.start_watching()
        report = indexer.reconcile(progress)
        if vectors is not None:
            vectors.build()
            vectors.start()
        if on_ready is not None:
            on_ready(report)
        if watch:
            (stop or threading.Event()).wait()
        return report
    finally:
        indexer.close()
        if vectors is not None:
            vectors.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("url", help="postgresql://… (or a libpq connection string)")
    ap.add_argument("--watch", action="store_true", help="keep following saves until interrupted")
    ns = ap.parse_args(argv)
    if not ns.vault.is_dir():
        print(f"{ns.vault} is not a folder: pass the vault's path", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        index_vault(ns.vault, ns.url, watch=ns.watch, stop=stop,
                    on_ready=lambda report: print(json.dumps(report), flush=True))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
