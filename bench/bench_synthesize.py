"""synthesize benchmarks: what brain itself adds around the model call.

The model's own latency and price are the provider's; this measures ours,
against the loopback fake servers the tests use (they answer instantly):

  gather    gather() alone (search + page text + facts + packing), p50/p99 ms,
            pages gathered and prompt tokens
  verb      the whole verb through dispatch with each wire format's SDK,
            p50/p99 ms (gather + prompt + SDK round trip + parse)

on sample_brain/ and on a bench/corpus.py vault (default 2,000 pages), keyword
search only (no embedding model). Prints one JSON object per line.

    /work/venv/bin/python bench/bench_synthesize.py --pages 2000 --runs 40
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brain.daemon.server.usage_stats import percentile

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTIONS = [
    "What did we decide about the launch date and why?",
    "Who owns the vendor relationship for the Apollo project?",
    "What changed in the budget since last quarter?",
    "Which companies did we meet about pricing?",
    "What are the open commitments for the design review?",
]
def pct(xs: list[float], p: float) -> float:
    return round(percentile(xs, p), 2)


def bench_vault(label: str, vault: Path, runs: int) -> None:
    from llm_fakes import FakeLLM, json_answer

    from brain.daemon.protocol.dispatch import dispatch
    from brain.daemon.server.vault_engine import VaultEngine
    from brain.daemon.llm.providers import provider_from_config
    from brain.daemon.places import Places
    from brain.daemon.protocol.budget import estimate_tokens
    from brain.daemon.protocol.caller import Caller
    from brain.daemon.verbs.gather import Window, gather
    from brain.daemon.verbs.synthesis import build_prompt

    home = Path(tempfile.mkdtemp(prefix="bh-bench-"))
    engine = VaultEngine(vault, Places.from_env({"BRAIN_HOME": str(home)}), {}, writer="bench")
    try:
        t0 = time.perf_counter()
        engine.attach_index(watch=False)
        index_s = time.perf_counter() - t0
        caller = Caller.local("bench")
        times, pages, tokens = [], [], []
        for i in range(runs):
            q = QUESTIONS[i % len(QUESTIONS)]
            t = time.perf_counter()
            g = gather(engine, q, caller, Window())
            system, user = build_prompt(q, g, Window())
            times.append((time.perf_counter() - t) * 1000)
            pages.append(len(g.pages))
            tokens.append(estimate_tokens(system) + estimate_tokens(user))
        print(json.dumps({"bench": "synthesize.gather", "vault": label, "index_s": round(index_s, 2),
                          "runs": runs, "p50_ms": pct(times, 50), "p99_ms": pct(times, 99),
                          "pages_gathered_median": statistics.median(pages),
                          "prompt_tokens_median": statistics.median(tokens)}), flush=True)
        with FakeLLM() as fake:
            fake.queue(json_answer("An answer.", ["projects/page-2"], input_tokens=3000, output_tokens=200))
            for provider, model in (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4.1-mini")):
                url = fake.anthropic_url if provider == "anthropic" else fake.openai_url
                engine.llm = provider_from_config(
                    {"llm.provider": provider, "llm.base_url": url, "llm.model": model},
                    {"ANTHROPIC_API_KEY": "bench", "OPENAI_API_KEY": "bench"}, max_retries=0)
                dispatch(engine, "synthesize", {"question": QUESTIONS[0]}, caller)  # SDK import + connect
                times = []
                for i in range(runs):
                    t = time.perf_counter()
                    body, err = dispatch(engine, "synthesize", {"question": QUESTIONS[i % len(QUESTIONS)]}, caller)
                    times.append((time.perf_counter() - t) * 1000)
                    assert not err and body["synthesis_status"] == "ok", body
                print(json.dumps({"bench": "synthesize.verb", "vault": label, "provider": provider, "runs": runs,
                                  "p50_ms": pct(times, 50), "p99_ms": pct(times, 99),
                                  # priced from the fake's fixed usage, not a measured figure
                                  "usd_per_call_at_3000_in_200_out": body["cost"]["usd_estimate"]}), flush=True)
    finally:
        engine.close()
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    import corpus

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000, help="size of the generated vault")
    ap.add_argument("--runs", type=int, default=40)
    ns = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="synth-bench-"))
    try:
        sample = tmp / "sample_brain"
        shutil.copytree(REPO / "sample_brain", sample, ignore=shutil.ignore_patterns(".brain"))
        bench_vault("sample_brain", sample, ns.runs)
        corpus.generate(tmp / "gen", ns.pages)
        bench_vault(f"generated-{ns.pages}", tmp / "gen", ns.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
