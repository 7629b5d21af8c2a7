"""The embedder's figures: model ready time, daemon RSS, build rate, query latency during a build.

Prints one JSON object per line, each with the load average beside it (this
bench is meant for a shared 2-core machine; quote medians of repeated runs).
Sections (--only, comma-separated):

  daemon  `brain daemon start` on a vault (sample_brain/, and a generated
          corpus with --pages N): seconds from the first answer to the model
          being ready, to vectors serving; the build's rate as the daemon
          runs it; recall-by-query p50/p99 over the socket during the build;
          RSS with the model; then a mixed load of calls over MCP on the
          socket (remember p50 among them) and RSS after it
  build   in process on a generated vault: ChunkVectors.build chunks/s
          with nothing else running, then again with a query embedding
          every --query-gap-ms, and the query embedding's p50/p99 meanwhile

Runs against whatever brain is installed beside this Python, so the same
script measures an older checkout too (its torch embedder has no background
lane: the build then calls `embed`).

    .venv/bin/python bench/bench_embedder.py --only daemon --pages 2000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from brain.daemon.server.usage_stats import percentile as pct

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_daemon import SocketClient  # noqa: E402
from bench_vectors import rss_mb  # noqa: E402
from corpus import generate  # noqa: E402
from vector_data import sentence  # noqa: E402

BRAIN = str(Path(sys.executable).parent / "brain")
QUERIES = ["who works on the launch", "pricing decision", "what slipped because of staffing",
           "investment plans", "meeting notes from the offsite", "hiring for the data team"]


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def emit(**row) -> None:
    row["loadavg"] = loadavg()
    print(json.dumps(row), flush=True)


def ms(samples: list[float], q: float) -> float | None:
    return round(pct(samples, q), 1) if samples else None


# -- daemon -----------------------------------------------------------------------


def bench_daemon(label: str, vault_src: Path | None, pages: int, calls: int, model_cache: str | None) -> None:
    from brain.daemon import config as config_mod
    from brain.daemon.places import Places
    from brain.daemon.rendezvous import pid_path

    home = Path(tempfile.mkdtemp(prefix="be-", dir="/tmp"))
    vault = home / "vault"
    if vault_src is not None:
        shutil.copytree(vault_src, vault, ignore=shutil.ignore_patterns(".brain"))
    else:
        generate(vault, pages)
    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": True})
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    if model_cache:
        env["BRAIN_MODEL_CACHE"] = model_cache  # an export made before: "model ready" with the export cached
    load_start = loadavg()
    try:
        t0 = time.monotonic()
        subprocess.run([BRAIN, "daemon", "start"], env=env, capture_output=True, timeout=300, check=True)
        client = None
        while client is None:
            try:
                client = SocketClient(str(places.socket_path(vault)))
            except OSError:
                time.sleep(0.02)
        body, _ = client.call("status", {})
        answered = time.monotonic()
        model_ready = vectors_ready = None
        samples: list[tuple[float, int]] = []   # (time, vectors) while building
        recall_lat: list[float] = []
        last = body
        while time.monotonic() - t0 < 1800:
            body, _ = client.call("status", {})
            now = time.monotonic()
            last = body
            if model_ready is None and body.get("model_state") in ("ready", "failed", "off"):
                model_ready = now
            if model_ready is not None:
                samples.append((now, int(body.get("vectors") or 0)))
                q = time.perf_counter()
                client.call("recall", {"query": QUERIES[len(recall_lat) % len(QUERIES)], "limit": 10})
                if not body.get("vectors_ready"):
                    recall_lat.append((time.perf_counter() - q) * 1000)
            if body.get("vectors_ready") or body.get("model_state") in ("failed", "off"):
                vectors_ready = now
                break
            time.sleep(0.2 if model_ready is None else 0.25)
        pid = json.loads(pid_path(places, vault).read_text())["pid"]
        moving = [(t, v) for t, v in samples if v > 0]
        rate = None
        if len(moving) >= 2 and moving[-1][0] > moving[0][0]:
            rate = round((moving[-1][1] - moving[0][1]) / (moving[-1][0] - moving[0][0]), 1)
        time.sleep(1.0)
        rss_ready = rss_mb(pid)
        emit(bench="daemon_model", vault=label, chunks=last.get("chunks"), vectors=last.get("vectors"),
             backend=last.get("model_backend", "sentence-transformers (no model_backend field)"),
             fallback_reason=last.get("model_fallback_reason"),
             first_answer_s=round(answered - t0, 2),
             model_ready_after_answer_s=round(model_ready - answered, 2) if model_ready else None,
             vectors_serving_after_answer_s=round(vectors_ready - answered, 2) if vectors_ready else None,
             build_chunks_per_s=rate, recall_query_during_build_p50_ms=ms(recall_lat, 50),
             recall_query_during_build_p99_ms=ms(recall_lat, 99), recall_queries_during_build=len(recall_lat),
             vector_build=last.get("vector_build"), rss_mb_with_model=rss_ready, loadavg_at_start=load_start)
        mixed_load(client, calls, label)
        emit(bench="daemon_rss_after_mixed_load", vault=label, calls=calls * 6, rss_mb=rss_mb(pid))
    finally:
        subprocess.run([BRAIN, "daemon", "stop"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(home, ignore_errors=True)


def mixed_load(client, calls: int, label: str) -> None:
    pages = client.call("list_pages", {"limit": 50})[0]
    slugs = [p["slug"] for p in pages.get("pages", [])] or ["people/me"]
    people = [s for s in slugs if s.startswith("people/")] or slugs
    rng = random.Random(4)
    ids: list = []
    verbs = {
        "remember": lambda i: ("remember", {"fact": sentence(rng), "provenance": "bench", "entity": people[i % len(people)]}),
        "recall_query": lambda i: ("recall", {"query": QUERIES[i % len(QUERIES)], "limit": 10}),
        "recall_entity": lambda i: ("recall", {"entity": people[i % len(people)]}),
        "entity": lambda i: ("entity", {"name": slugs[i % len(slugs)]}),
        "context_pack": lambda i: ("context_pack", {"entities": ",".join(slugs[i % len(slugs):][:3]), "budget_tokens": 1500}),
        "forget": lambda i: ("forget", {"id": ids[i % len(ids)] if ids else "1"}),
    }
    for name, make in verbs.items():
        lat, errors = [], 0
        for i in range(calls):
            verb, args = make(i)
            t = time.perf_counter()
            body, is_error = client.call(verb, args)
            lat.append((time.perf_counter() - t) * 1000)
            errors += is_error
            if name == "remember" and not is_error and "id" in body:
                ids.append(body["id"])
        emit(bench=f"mcp_socket_{name}", vault=label, n=calls, p50_ms=ms(lat, 50), p99_ms=ms(lat, 99), errors=errors)


# -- build ------------------------------------------------------------------------


def daemon_embedder(model_cache: str | None):
    """What the daemon of the installed brain would load (older checkouts: the torch embedder)."""
    try:
        from brain.indexer.embeddings.model_loader import load_minilm
    except ImportError:
        from brain.indexer.embeddings.embedder import MiniLMEmbedder

        return MiniLMEmbedder()
    root = Path(tempfile.mkdtemp(prefix="be-models-", dir="/tmp"))
    if model_cache:
        os.environ["BRAIN_MODEL_CACHE"] = model_cache
    return load_minilm(root)


def peak_rss_mb() -> float:
    """This process's peak resident set so far (the kernel's VmHWM): the build runs before the
    bare-session runs below, so their peak is not in it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def chunk_texts(db) -> list[str]:
    """What the build embeds: each distinct chunk content, heading and text (vectors.ChunkVectors._texts)."""
    rows = db.execute("SELECT heading, text FROM chunks GROUP BY hash").fetchall()
    return [f"{h}\n{t}" if h else t for h, t in rows]


def plain_onnxruntime(model, texts: list[str], threads: int, batch: int = 8) -> dict:
    """The same chunks through one bare onnxruntime session (`threads` intra-op threads, default
    options) in length-sorted batches of `batch`: what the machine can do, for the build to match."""
    import numpy as np
    import onnxruntime as ort

    folder = Path(model._tokenizer_file).parent
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    session = ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    tok = model._new_tokenizer()
    names = {i.name for i in session.get_inputs()}
    ordered = sorted(texts, key=len)
    t = time.perf_counter()
    n_tokens = 0
    for i in range(0, len(ordered), batch):
        enc = tok.encode_batch(ordered[i:i + batch])
        feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64)}
        n_tokens += int(feed["attention_mask"].sum())
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
        session.run(None, feed)
    dt = time.perf_counter() - t
    del session
    return {"threads": threads, "seconds": round(dt, 1), "chunks_per_s": round(len(texts) / dt, 1),
            "tokens_per_chunk": round(n_tokens / max(1, len(texts)), 1)}


def plain_in_thread(model, texts: list[str], threads: int, niced: bool) -> dict:
    """plain_onnxruntime on a thread of its own; `niced`: at the build threads' priority (its
    session's pool threads inherit it), the like-for-like figure on a machine others share."""
    from brain.indexer.embeddings.embed_lanes import lower_thread_priority

    out: dict = {}

    def run():
        if niced:
            lower_thread_priority()
        out.update(plain_onnxruntime(model, texts, threads))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out


def bench_build(pages: int, query_gap_ms: float, model_cache: str | None) -> None:
    from brain.daemon.server.vault_engine import VaultEngine
    from brain.daemon.places import Places
    from brain.indexer.embeddings.vectors import ChunkVectors
    from brain.indexer.pages.chunk_rows import ChunkRows

    t = time.perf_counter()
    model = daemon_embedder(model_cache)
    emit(bench="embedder_load", seconds=round(time.perf_counter() - t, 2), backend=getattr(model, "backend", "torch"),
         model=model.model_id, workers=getattr(model, "workers", 1), process_rss_mb=rss_mb())
    with tempfile.TemporaryDirectory(prefix="be-b-") as d:
        vault, home = Path(d) / "vault", Path(d) / "home"
        generate(vault, pages)
        e = VaultEngine(vault, Places.from_env({"BRAIN_HOME": str(home)}), {"embeddings.enabled": True}, writer="bench")
        e.attach_index()
        n = e.page_db.execute("SELECT COUNT(DISTINCT hash) FROM chunks").fetchone()[0]
        rates: dict[str, float] = {}
        for run, with_queries in (("idle", False), ("with_queries", True)):
            cache = Path(d) / f"vec-{run}"
            v = ChunkVectors(ChunkRows(e.page_db), cache, model)
            lat: list[float] = []
            stop = threading.Event()

            def ask():
                rng = random.Random(9)
                while not stop.is_set():
                    q = sentence(rng)[:60]
                    s = time.perf_counter()
                    model.embed([q])
                    lat.append((time.perf_counter() - s) * 1000)
                    stop.wait(query_gap_ms / 1000)

            asker = threading.Thread(target=ask, daemon=True) if with_queries else None
            load0 = loadavg()
            t = time.perf_counter()
            if asker:
                asker.start()
            v.build()
            dt = time.perf_counter() - t
            stop.set()
            if asker:
                asker.join()
            v.close()
            cores = os.cpu_count() or 1
            emit(bench=f"build_{run}", pages=pages, chunks=n, seconds=round(dt, 1), chunks_per_s=round(n / dt, 1),
                 workers=getattr(v, "workers", 1), loadavg_at_start=load0,
                 idle_cores_at_start=round(max(0.0, cores - load0[0]), 2),
                 query_embed_p50_ms=ms(lat, 50), query_embed_p99_ms=ms(lat, 99), queries=len(lat),
                 process_rss_mb=rss_mb(), process_peak_rss_mb=peak_rss_mb())
            rates[run] = n / dt
        if hasattr(model, "_tokenizer_file"):  # the onnxruntime backend: a bare session on the same chunks
            texts = chunk_texts(e.page_db)
            for threads, niced in ((1, False), (2, False), (2, True)):
                plain = plain_in_thread(model, texts, threads, niced)
                emit(bench=f"plain_onnxruntime_{threads}_threads" + ("_niced" if niced else ""), pages=pages,
                     chunks=len(texts), **plain, build_idle_of_plain=round(rates["idle"] / plain["chunks_per_s"], 2))
        e.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="daemon,build")
    ap.add_argument("--pages", type=int, default=0, help="also run the daemon section on a generated corpus")
    ap.add_argument("--build-pages", type=int, default=400)
    ap.add_argument("--calls", type=int, default=100, help="calls per verb in the mixed load")
    ap.add_argument("--query-gap-ms", type=float, default=100.0)
    ap.add_argument("--model-cache", default=None,
                    help="BRAIN_MODEL_CACHE holding an export made before (default: export anew per daemon home)")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    if "daemon" in only:
        bench_daemon("sample_brain", REPO / "sample_brain", 0, args.calls, args.model_cache)
        if args.pages:
            bench_daemon(f"{args.pages} generated pages", None, args.pages, args.calls, args.model_cache)
    if "build" in only:
        bench_build(args.build_pages, args.query_gap_ms, args.model_cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
