"""PostgreSQL page search measured against the embedded arms, on the page question sets.

    python bench/bench_pg_search.py [--sets questions,npm-tune,npm-report] [--fusion rrf,share]

For each vault of bench/eval_pages.py (sample_brain/ with its questions; npm's
documentation with npm-tune and npm-report), in one run and on the same pages:

- the embedded index is built in-process (the indexer's own pages and
  chunks, tantivy), its chunks embedded with the daemon's MiniLM (onnxruntime),
  and every question asked of the tantivy keyword arm and of the embedded
  hybrid (indexer/pages/search.py, as recall's query arm);
- the same vault is loaded into a throwaway PostgreSQL with pgvector
  (daemon/postgres/local_server.py, durable: fsync on) by the vault
  indexer and the chunk vectors of a deployment (indexer.py, chunk_vectors.py;
  each text embedded once, so both stores hold the same vectors) and asked
  through the store (PgPagesStore.search) and daemon/postgres/page_search.py:
  keyword, vector, and the two fused (`cards`: the embedded fusion, nearest chunks
  and page cards as two lists; `share`; `rrf`);
- the textbook baselines of bench/eval_baselines.py score the same questions.

Prints one JSON line per set and arm (R@1, R@5, R@10, MRR), then the cold load
of each vault into PostgreSQL (pages/s, chunks/s, vectors included, embedding
not: that is the model's cost, the same for both stores) and p50/p99 of each
PostgreSQL search mode (the query's embedding is made once beforehand and not
timed, as the embedded arm's vector query is timed without it in bench_vectors).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from eval_baselines import rank_pages  # noqa: E402
from eval_pages import NPM_SETS, QUESTIONS, SAMPLE, load_questions, npm_vault, score_ranked  # noqa: E402

from brain.daemon.server.usage_stats import percentile as pct  # noqa: E402

K = 10
BATCH = 16
MODEL_CACHE = Path(os.environ.get("BRAIN_MODEL_CACHE") or Path(tempfile.gettempdir()) / f"brain-test-models-{os.getuid()}")


def emit(**row) -> None:
    print(json.dumps(row), flush=True)


class OnceEmbedder:
    """The daemon's model, each distinct text embedded once: the embedded vectors and the
    PostgreSQL ones are the same numbers."""

    def __init__(self, model):
        self.model, self.model_id, self.dim = model, model.model_id, model.dim
        self.workers = getattr(model, "workers", 1)
        self.seen: dict[str, object] = {}

    def embed(self, texts):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
        # a few texts per call, as the daemon embeds: the model pads a batch to its longest text,
        # and a thousand texts in one call take gigabytes
        for i in range(0, len(todo), BATCH):
            for t, v in zip(todo[i:i + BATCH], self.model.embed(todo[i:i + BATCH])):
                self.seen[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self.seen[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    embed_background = embed


def embedded_index(vault: Path, embedder):
    """The embedded stores over `vault`: (engine, chunk vectors), every chunk embedded."""
    from brain.daemon.places import Places
    from brain.daemon.server.vault_engine import VaultEngine
    from brain.indexer.embeddings.vectors import ChunkVectors
    from brain.indexer.pages.chunk_rows import ChunkRows

    home = Path(tempfile.mkdtemp(prefix="bpg-", dir="/tmp"))
    e = VaultEngine(vault, Places.from_env({"BRAIN_HOME": str(home)}), {"embeddings.enabled": False}, writer="bench")
    e.attach_index()
    vectors = ChunkVectors(ChunkRows(e.page_db), e.cache_dir, embedder)
    vectors.build()
    return e, vectors, home


def new_database(server, name: str) -> str:
    import psycopg

    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    return server.dsn.replace("dbname=postgres", f"dbname={name}")


def run_vault(server, label: str, vault: Path, sets: dict[str, list], model, fusions: list[str]) -> None:
    import psycopg

    from brain.daemon.postgres.chunk_vectors import PgChunkVectors
    from brain.daemon.postgres.indexer import PgVaultIndexer
    from brain.daemon.postgres.page_search import search
    from brain.daemon.postgres.pages_store import PgPagesStore
    from brain.indexer.vault.visibility import Viewer

    embedder = OnceEmbedder(model)
    t = time.perf_counter()
    e, vectors, home = embedded_index(vault, embedder)
    emit(bench="embedded_build", vault=label, seconds=round(time.perf_counter() - t, 1), vectors=len(vectors))
    try:
        dsn = new_database(server, label.replace("-", "_"))
        # the same vault loaded the way a deployment loads it: the vault indexer, then the chunk
        # vectors (each text already embedded once above, so this times the writes, not the model)
        t = time.perf_counter()
        indexer = PgVaultIndexer(vault, dsn)
        report = indexer.reconcile()
        keyword_s = time.perf_counter() - t
        pg_vectors = PgChunkVectors(dsn, embedder)
        pg_vectors.build()
        load_s = time.perf_counter() - t
        indexer.close()
        with psycopg.connect(dsn) as conn:
            n_pages, n_chunks = conn.execute("SELECT (SELECT count(*) FROM pages), (SELECT count(*) FROM chunks)").fetchone()
            emit(bench="pg_cold_load", vault=label, pages=n_pages, chunks=n_chunks, parsed=report["parsed"],
                 keyword_seconds=round(keyword_s, 2), seconds=round(load_s, 2),
                 pages_per_s=round(n_pages / load_s), chunks_per_s=round(n_chunks / load_s))
            conn.execute("ANALYZE")
            conn.commit()
            store = PgPagesStore(dsn, vault)
            # the local lane: the owner sees private pages in both stores
            owner = Viewer.owner()
            arms = {"embedded keyword (tantivy)": lambda q, v: e.pages.search(q, K, owner)[0],
                    "embedded hybrid": lambda q, v: e.pages.search(q, K, owner, embedder=embedder,
                                                                    vectors=vectors)[0],
                    "pg store (PgPagesStore.search)": lambda q, v: store.search(q, K, owner, embedder=embedder,
                                                                                 vectors=pg_vectors)[0],
                    "pg keyword": lambda q, v: search(conn, q, None, Viewer.owner(), K, mode="keyword"),
                    "pg vector": lambda q, v: search(conn, q, v, Viewer.owner(), K, mode="vector")}
            for how in fusions:
                arms[f"pg hybrid ({how})"] = (lambda how: lambda q, v: search(conn, q, v, Viewer.owner(), K,
                                                                              mode="hybrid", fusion=how))(how)
            for set_name, questions in sets.items():
                qv = embedder.embed([q for q, _ in questions])
                # the textbook baselines (eval_pages.baselines), with the same model as both stores
                from brain.indexer.vault.slugs import path_to_slug

                ranked_by = rank_pages(vault, [q for q, _ in questions], path_to_slug, embedder=embedder)
                for base, lists in ranked_by.items():
                    emit(set=set_name, arm=f"{base} (textbook)", **score_ranked(lists, questions))
                for arm, ask in arms.items():
                    ranked, lat = [], []
                    for (q, _), v in zip(questions, qv):
                        t = time.perf_counter()
                        hits = ask(q, v.tolist())
                        lat.append((time.perf_counter() - t) * 1000)
                        ranked.append([h["slug"] for h in hits])
                    emit(set=set_name, arm=arm, **score_ranked(ranked, questions),
                         p50_ms=round(pct(lat, 50), 2), p99_ms=round(pct(lat, 99), 2))
            store.close()
            pg_vectors.close()
    finally:
        vectors.close()
        e.close()
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="questions,npm-tune,npm-report")
    ap.add_argument("--fusion", default="rrf,share,cards", help="hybrid fusions to score: rrf, share, cards")
    ns = ap.parse_args()
    wanted = ns.sets.split(",")
    from brain.daemon.postgres.local_server import LocalPostgres
    from brain.indexer.embeddings.model_loader import load_minilm

    model = load_minilm(MODEL_CACHE)
    emit(bench="setup", load=open("/proc/loadavg").read().split()[:3], model=model.model_id,
         backend=getattr(model, "backend", "?"))
    with LocalPostgres(durable=True) as server:
        if "questions" in wanted:
            vault = Path(tempfile.mkdtemp(prefix="bpg-sample-", dir="/tmp")) / "vault"
            shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".brain"))
            try:
                run_vault(server, "sample_brain", vault, {"page questions (sample_brain)": load_questions(QUESTIONS)},
                          model, ns.fusion.split(","))
            finally:
                shutil.rmtree(vault.parent, ignore_errors=True)
        npm = {f"page questions ({n})": load_questions(p) for n, p in NPM_SETS.items() if n in wanted and p.exists()}
        if npm:
            vault = npm_vault()
            try:
                run_vault(server, "npm-docs", vault, npm, model, ns.fusion.split(","))
            finally:
                shutil.rmtree(vault.parent, ignore_errors=True)
    emit(bench="done", load=open("/proc/loadavg").read().split()[:3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
