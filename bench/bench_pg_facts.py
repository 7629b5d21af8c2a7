"""Facts ranking on PostgreSQL measured against the embedded store, on the conversation question sets.

    python bench/bench_pg_facts.py [--sets hard-tune,hard-report,ours] [--keyword-only]

For each set of bench/retrieval_eval.py, in one run: every turn is saved as a
fact the way remember saves it (retrieval_eval.fact_args: speaker and text,
the conversation, session and date as provenance) into the embedded facts
store (daemon/facts/store.py) and into PostgreSQL (daemon/postgres/
facts_store.py, a throwaway durable server from local_server.py), in the same
order; with vectors, each turn is embedded once with the daemon's MiniLM and
both stores hold the same vector. Every question is ranked by both stores'
`ranked` (top 10, the owner's view) and scored as retrieval_eval scores
recall (R@k, MRR, the share of unanswerable questions left empty).

Prints one JSON line per set and store, then p50/p99 of `ranked` and of
`insert` on each (the query's embedding made beforehand, not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from retrieval_eval import fact_args, load_set, score, set_prefix  # noqa: E402

MODEL_CACHE = Path(os.environ.get("BRAIN_MODEL_CACHE") or Path(tempfile.gettempdir()) / f"brain-test-models-{os.getuid()}")


def emit(**row) -> None:
    print(json.dumps(row), flush=True)


def percentiles(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"p50_ms": round(ms[len(ms) // 2], 2), "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2)}


def fill(store, turns: list[dict]) -> tuple[dict[int, str], list[float]]:
    """Save every turn as remember would; fact id -> turn id, and each insert's time."""
    by_id, took = {}, []
    for t in turns:
        args = fact_args(t)
        start = time.perf_counter()
        fid = store.insert(fact=args["fact"], kind="fact", entity_slug=None, visibility="world",
                           source=args["provenance"], valid_until=None)
        took.append((time.perf_counter() - start) * 1000)
        by_id[fid] = t["id"]
    return by_id, took


def attach(store, model, texts: dict[int, str]) -> object:
    """Every fact's vector stored beside it, and the fact vectors attached for ranking."""
    from brain.indexer.embeddings.fact_vectors import FactVectors, fact_key

    vectors = FactVectors(store, model)
    ids = sorted(texts)
    for i in range(0, len(ids), 64):
        part = ids[i:i + 64]
        vecs = model.embed([texts[fid] for fid in part])
        store.put_vectors([(fid, fact_key(model.model_id, texts[fid]), v.astype("float32").tobytes())
                           for fid, v in zip(part, vecs)])
    store.attach_vectors(vectors)
    return vectors


def run_set(name: str, server, model) -> None:
    from brain.daemon.facts.store import SqliteFactsStore
    from brain.daemon.stores.facts import FactScope
    from brain.daemon.postgres.facts_store import PgFactsStore
    from brain.indexer.vault.visibility import Viewer

    turns, questions = load_set(name, smoke=False)
    dsn = new_database(server, name.replace("-", "_"))
    with tempfile.TemporaryDirectory(prefix="bench-pg-facts-") as tmp:
        stores = {"embedded": SqliteFactsStore(Path(tmp) / "facts.jsonl", Path(tmp) / "facts.sqlite"),
                  "postgres": PgFactsStore(dsn)}
        for label, store in stores.items():
            by_id, inserts = fill(store, turns)
            vectors = None
            if model is not None:
                texts = {f.id: f.fact for f in store.listed(FactScope(), Viewer.owner(), None)}
                vectors = attach(store, model, texts)
                for q in questions:   # the query vectors made before the clock runs
                    vectors.vector(q["question"])
            ranked, took = [], []
            for q in questions:
                start = time.perf_counter()
                found = store.ranked(q["question"], FactScope(), Viewer.owner(), 10)
                took.append((time.perf_counter() - start) * 1000)
                ranked.append([by_id.get(f.id, "?") for f in found])
            figures = score(questions, ranked, set_prefix(name))[set_prefix(name)]
            emit(bench="facts_ranking", set=name, store=label, vectors=model is not None, facts=len(turns),
                 **figures, ranked=percentiles(took), insert=percentiles(inserts))
            if vectors is not None:
                vectors.close()
            store.close()


def new_database(server, name: str) -> str:
    import psycopg

    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    return server.dsn.replace("dbname=postgres", f"dbname={name}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="hard-tune,hard-report")
    ap.add_argument("--keyword-only", action="store_true", help="no vectors: the keyword arms alone")
    ns = ap.parse_args(argv)
    from brain.daemon.postgres.local_server import LocalPostgres

    model = None
    if not ns.keyword_only:
        from brain.indexer.embeddings.model_loader import load_minilm

        model = load_minilm(MODEL_CACHE)
    emit(bench="setup", load=open("/proc/loadavg").read().split()[:3], vectors=model is not None)
    with LocalPostgres(durable=True) as server:
        for name in ns.sets.split(","):
            run_set(name, server, model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
