"""Cold load of a generated vault into PostgreSQL by the vault indexer, then its chunk vectors.

    python bench/bench_pg_load.py [--pages 2000] [--no-vectors]

A vault from bench/corpus.py (same seed, same bytes) is indexed into a fresh
throwaway PostgreSQL with pgvector (daemon/postgres/local_server.py,
durable: fsync on, as a deployment runs) by the one indexer of a deployment
(daemon/postgres/indexer.py: walk, parse, pages, links, aliases,
timeline, chunks with their weighted keyword documents), then every chunk is
embedded with the daemon's MiniLM into the pgvector column (chunk_vectors.py).
Prints one JSON line per phase: pages/s, chunks/s, tokens per chunk (the
model's own tokenizer, untruncated, and how many pass its 256-token window),
this process's peak RSS and the server's (the sum of its processes' peak
resident sets). Then a second pass with nothing changed (a restart),
and one edited file (the watcher's path).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from corpus import generate  # noqa: E402

MODEL_CACHE = Path(os.environ.get("BRAIN_MODEL_CACHE") or Path(tempfile.gettempdir()) / f"brain-test-models-{os.getuid()}")
WINDOW_TOKENS = 256


def emit(**row) -> None:
    print(json.dumps(row), flush=True)


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def server_peak_mb(data_dir: Path) -> float:
    """The server's processes' peak resident sets, summed (the postmaster and its children)."""
    try:
        root = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if int(pid) != root and ppid != root:
                continue
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return round(total / 1024, 1)


def tokens_per_chunk(dsn: str, model) -> dict:
    """Tokens per chunk text as the model's tokenizer cuts it, before its window truncates it."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        texts = [f"{h}\n{t}" if h else t for h, t in conn.execute("SELECT heading, text FROM chunks")]
    tokenizer_file = getattr(model, "_tokenizer_file", None)
    if tokenizer_file is None or not texts:
        return {"words_per_chunk": round(sum(len(t.split()) for t in texts) / max(1, len(texts)), 1)}
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_file)
    tok.no_truncation()
    tok.no_padding()
    counts = sorted(len(e.ids) for e in tok.encode_batch(texts))
    return {"tokens_per_chunk": round(sum(counts) / len(counts), 1), "tokens_p50": counts[len(counts) // 2],
            "tokens_p90": counts[len(counts) * 9 // 10], "tokens_max": counts[-1],
            "over_window": sum(c > WINDOW_TOKENS for c in counts), "chunks": len(counts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--no-vectors", action="store_true")
    ns = ap.parse_args()
    import psycopg

    from brain.daemon.postgres.indexer import PgVaultIndexer
    from brain.daemon.postgres.local_server import LocalPostgres

    emit(bench="setup", load=open("/proc/loadavg").read().split()[:3], pages=ns.pages)
    work = Path(tempfile.mkdtemp(prefix="bpgload-", dir="/tmp"))
    vault = work / "vault"
    generate(vault, ns.pages)
    try:
        with LocalPostgres(durable=True) as server:
            dsn = server.dsn
            t = time.perf_counter()
            indexer = PgVaultIndexer(vault, dsn)
            report = indexer.reconcile()
            keyword_s = time.perf_counter() - t
            with psycopg.connect(dsn) as conn:
                n = dict(zip(("pages", "chunks", "links", "aliases", "timeline"), conn.execute(
                    "SELECT (SELECT count(*) FROM pages), (SELECT count(*) FROM chunks), (SELECT count(*) FROM links), "
                    "(SELECT count(*) FROM aliases), (SELECT count(*) FROM timeline)").fetchone()))
                size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
            emit(bench="pg_cold_load_keyword", **n, parsed=report["parsed"], seconds=round(keyword_s, 2),
                 pages_per_s=round(n["pages"] / keyword_s), chunks_per_s=round(n["chunks"] / keyword_s),
                 database_mb=round(size / 1048576, 1), client_peak_rss_mb=peak_rss_mb(),
                 server_peak_rss_mb=server_peak_mb(server.data_dir))
            t = time.perf_counter()
            again = indexer.reconcile()
            emit(bench="pg_restart_nothing_changed", seconds=round(time.perf_counter() - t, 2), **again)
            edited = sorted(vault.glob("people/*.md"))[0]
            edited.write_text(edited.read_text() + "\nOne more line about the pricing model.\n")
            t = time.perf_counter()
            indexer.apply([edited.relative_to(vault).as_posix()])
            emit(bench="pg_one_edited_file", ms=round((time.perf_counter() - t) * 1000, 1))
            from brain.indexer.embeddings.model_loader import load_minilm

            model = load_minilm(MODEL_CACHE)
            emit(bench="model", model=model.model_id, backend=getattr(model, "backend", "?"),
                 workers=getattr(model, "workers", 1), **tokens_per_chunk(dsn, model))
            if not ns.no_vectors:
                from brain.daemon.postgres.chunk_vectors import PgChunkVectors

                vectors = PgChunkVectors(dsn, model)
                t = time.perf_counter()
                vectors.build()
                vec_s = time.perf_counter() - t
                stats = vectors.stats()
                emit(bench="pg_cold_load_vectors", vectors=stats["vectors"], embedded=stats["embedded"],
                     seconds=round(vec_s, 1), chunks_per_s=round(int(stats["vectors"]) / vec_s, 1),
                     with_keyword_pages_per_s=round(n["pages"] / (vec_s + keyword_s), 1),
                     client_peak_rss_mb=peak_rss_mb(), server_peak_rss_mb=server_peak_mb(server.data_dir))
                vectors.close()
            indexer.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(bench="done", load=open("/proc/loadavg").read().split()[:3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
