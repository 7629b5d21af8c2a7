"""Single-machine limits at one vault size, printed as JSON lines (docs/scaling.md).

    python bench/bench_scale.py --pages 20000 [--calls 300] [--edits 20]

For a vault written by bench/corpus.py it measures, keyword-only (no
embedding model; vectors are measured in bench/bench_vectors.py):

  cold       cold index time, pages/s, peak RSS of the indexing process
  disk       bytes of the vault, of the caches (SQLite, tantivy) and of facts.jsonl
  read       entity / recall(entity) / recall(query) / context_pack p50/p99
             through the dispatch pipeline, as a remote caller
  save       save → searchable with the watcher running, p50/p95
  reopen     a warm daemon start over the same caches (no-change reconcile)

Nothing here fails on wall time; the machine is shared, so the load
average is printed with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from brain.daemon.server.usage_stats import percentile as pct

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import bench_save, open_engine, rss_mb  # noqa: E402
from corpus import TOPICS, generate  # noqa: E402


def emit(**kw) -> None:
    kw["loadavg"] = os.getloadavg()[0].__round__(2)
    print(json.dumps(kw), flush=True)


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def timed(fn, n: int) -> dict:
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1000)
    return {"calls": n, "p50_ms": round(pct(ms, 50), 2), "p99_ms": round(pct(ms, 99), 2)}


def bench_cold(home: Path, vault: Path, pages: int) -> None:
    engine = open_engine(home, vault)
    t0 = time.perf_counter()
    engine.attach_index()
    secs = time.perf_counter() - t0
    emit(bench="cold_index", pages=pages, seconds=round(secs, 1), pages_per_s=round(pages / secs),
         max_rss_mb=rss_mb())
    engine.close()
    emit(bench="disk", pages=pages, vault_mb=round(tree_bytes(vault) / 2**20, 1),
         caches_mb=round(tree_bytes(home) / 2**20, 1),
         facts_log_mb=round((vault / ".brain" / "facts.jsonl").stat().st_size / 2**20, 2))


def bench_reads(home: Path, vault: Path, pages: int, calls: int) -> None:
    from brain.daemon.protocol.dispatch import dispatch
    from brain.daemon.protocol.caller import Caller

    engine = open_engine(home, vault)
    t0 = time.perf_counter()
    engine.attach_index()
    emit(bench="warm_open", pages=pages, seconds=round(time.perf_counter() - t0, 2))
    rng = random.Random(3)
    slugs = [r[0] for r in engine.page_db.execute(
        "SELECT slug FROM pages WHERE visibility != 'private' ORDER BY id")]
    # entities that have world-visible facts, so recall(entity) returns some
    with_facts = [r[0] for r in engine.facts.db.execute(
        "SELECT DISTINCT entity_slug FROM facts WHERE entity_slug IS NOT NULL AND visibility != 'private' "
        "LIMIT 5000")] or slugs
    caller = Caller(remote=True, transport="bench")

    def call(name, args):
        body, err = dispatch(engine, name, args, caller)
        assert not err, body

    for name, make in (
        ("entity", lambda: {"name": rng.choice(slugs)}),
        ("recall_entity", lambda: {"entity": rng.choice(with_facts), "limit": 20}),
        ("recall_query", lambda: {"query": rng.choice(TOPICS), "limit": 10}),
        ("context_pack", lambda: {"entities": ",".join(rng.choice(slugs) for _ in range(8)), "budget_tokens": 2000}),
    ):
        verb = name.split("_")[0] if name.startswith("recall") else name
        for _ in range(20):  # warm the page cache
            call(verb, make())
        emit(bench=name, pages=pages, **timed(lambda: call(verb, make()), calls), max_rss_mb=rss_mb())
    engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--edits", type=int, default=20)
    ns = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    home, vault = work / "home", work / "vault"
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        t0 = time.perf_counter()
        summary = generate(vault, ns.pages)
        emit(bench="corpus", pages=summary["pages"], facts=summary["facts"], seconds=round(time.perf_counter() - t0, 1))
        bench_cold(home, vault, summary["pages"])
        bench_reads(home, vault, summary["pages"], ns.calls)
        if ns.edits:
            bench_save(home, vault, ns.edits)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
