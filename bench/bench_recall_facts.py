"""recall with a query over MCP at scale: pages from bench/corpus.py plus many facts.

    python bench/bench_recall_facts.py [--pages 20000] [--facts 50000] [--keyword-only] [--queries 200]

Generates the vault, lets the daemon index it (and, with embeddings, embed
every chunk and fact), then times `recall {query}` through the MCP SDK client
over `brain serve` (interleaved with `search {query}`, the page arm alone, so
the facts arm's share is the difference) and `remember` → the fact found by
`recall {query}`.
Each line: {"bench", "n", "p50_ms", "p99_ms", "pages", "facts", "mode", "loadavg", ...}.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from eval_common import TempBrain, call, loadavg  # noqa: E402

from brain.daemon.places import Places  # noqa: E402
from brain.daemon.server.usage_stats import percentile as pct  # noqa: E402


def queries(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = f"{rng.choice(corpus.FIRST)} {rng.choice(corpus.LAST)}"
        out.append(rng.choice([
            f"what does {p} think about {rng.choice(corpus.TOPICS)}?",
            f"who met in {rng.choice(corpus.CITIES)} about {rng.choice(corpus.TOPICS)}",
            f"{rng.choice(corpus.PROJ_A)} {rng.choice(corpus.PROJ_B)} risks",
            f"what do we owe {p}",
        ]))
    return out


def fact_vectors_done(brain: TempBrain, want: int, timeout: float) -> None:
    db = Places.from_env({"BRAIN_HOME": str(brain.home)}).cache_dir(brain.vault) / "facts.sqlite"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
                if c.execute("SELECT COUNT(*) FROM fact_vectors").fetchone()[0] >= want:
                    return
        except sqlite3.Error:
            pass
        time.sleep(2)
    raise TimeoutError("fact vectors not built in time")


def line(name: str, ms: list[float], **extra) -> None:
    print(json.dumps({"bench": name, "n": len(ms), "p50_ms": round(pct(ms, 50), 1),
                      "p99_ms": round(pct(ms, 99), 1), **extra, "loadavg": loadavg()}), flush=True)


async def measure(brain: TempBrain, qs: list[str], extra: dict) -> None:
    async with brain.session() as s:
        for q in qs[:10]:  # warm caches and the query path
            await call(s, "recall", {"query": q, "limit": 10})
        ms, pages_ms = [], []
        for q in qs:  # interleaved with the page arm alone, so both see the same load
            t0 = time.perf_counter()
            await call(s, "recall", {"query": q, "limit": 10})
            ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            await call(s, "search", {"query": q, "limit": 10})
            pages_ms.append((time.perf_counter() - t0) * 1000)
        line("recall_query_mcp", ms, **extra)
        line("search_pages_only_mcp", pages_ms, **extra)
        found, ms = 0, []
        for i in range(20):
            t0 = time.perf_counter()
            body = await call(s, "remember", {"fact": f"The zebra-{i} vault key sits under the blue mat",
                                             "provenance": "bench"})
            got = await call(s, "recall", {"query": f"where is the zebra-{i} vault key", "limit": 5})
            ms.append((time.perf_counter() - t0) * 1000)
            if "facts" not in got:
                raise RuntimeError(f"recall failed: {got}, remember: {body}")
            found += any(f["fact_id"] == body["id"] for f in got["facts"])
        line("remember_then_recall_mcp", ms, found_immediately=f"{found}/20", **extra)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--facts", type=int, default=50000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--keyword-only", action="store_true")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-vault-") as tmp:
        vault = Path(tmp)
        t0 = time.monotonic()
        corpus.generate(vault, a.pages, facts_ratio=a.facts / a.pages)
        with TempBrain(vault, embeddings=not a.keyword_only) as brain:
            brain.wait_ready(timeout=a.timeout)
            if not a.keyword_only:
                fact_vectors_done(brain, a.facts, a.timeout)
            extra = {"pages": a.pages, "facts": a.facts, "mode": "keyword" if a.keyword_only else "hybrid",
                     "build_s": round(time.monotonic() - t0, 1)}
            anyio.run(measure, brain, queries(a.queries), extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
