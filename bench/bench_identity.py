"""Entity and recall against another checkout of brain, in one run, as JSON lines.

    python bench/bench_identity.py --baseline-python OTHER/.venv/bin/python [--pages 2000] [--calls 300]

Two daemons, keyword-only, each on its own copy of one generated vault
(bench/corpus.py: N pages and about one fact per two pages): one run by this
checkout, one by the interpreter of another checkout (for example the commit
before a change, in a `git worktree` with its own virtual environment). The
same calls go to both, interleaved (A B A B …, the order swapped every call),
over each daemon's socket:

- entity of a person by name (a hit), and of a name no page has (a miss);
- recall {entity} of a person by name;
- recall {query} (limit 10), a different query every call;
- remember of a new fact about a person (each side gets the same texts);
- entity of a page's old slug after its file moved (this checkout follows it;
  the other may not: its answer is printed, not judged).

Each line: {"bench", "n", "this_p50_ms", "this_p99_ms", "baseline_p50_ms",
"baseline_p99_ms", "ratio_p50", "loadavg"}; the target of docs/architecture.md
"Entity identity" is a ratio of at most 1.0 within the noise (quote medians of
repeated runs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_daemon import SocketClient  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def start(python: str, home: Path, vault: Path) -> SocketClient:
    env = dict(os.environ, BRAIN_HOME=str(home), BRAIN_VAULT=str(vault), HF_HUB_OFFLINE="1")
    code = ("import sys\nfrom brain.daemon import config\nfrom brain.daemon.places import Places\n"
            "p = Places.from_env()\nconfig.save(p.config_file, {'vault': sys.argv[1], 'embeddings.enabled': False})\n"
            "print(p.socket_path(__import__('pathlib').Path(sys.argv[1]).resolve()))")
    sock = subprocess.run([python, "-c", code, str(vault)], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    subprocess.run([python, "-m", "brain.cli.entry", "daemon", "start"], env=env, capture_output=True, timeout=300)
    deadline = time.monotonic() + 300
    while True:
        try:
            client = SocketClient(sock)
            status, _ = client.call("status", {})
            if status.get("index_ready", True) and status.get("pages"):
                return client
            client.close()
        except (OSError, EOFError, KeyError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"the daemon of {python} did not come up on {vault}")
        time.sleep(0.5)


def stop(python: str, home: Path) -> None:
    subprocess.run([python, "-m", "brain.cli.entry", "daemon", "stop", "--all"],
                   env=dict(os.environ, BRAIN_HOME=str(home)), capture_output=True, timeout=60)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))], 2)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-python", required=True, help="the interpreter of the other checkout")
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=300)
    ns = ap.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bid-", dir="/tmp"))
    corpus = root / "corpus"
    subprocess.run([sys.executable, str(REPO / "bench" / "corpus.py"), str(corpus), "--pages", str(ns.pages)],
                   check=True, capture_output=True)
    sides = {"this": sys.executable, "baseline": ns.baseline_python}
    clients = {}
    try:
        for name, python in sides.items():
            shutil.copytree(corpus, root / name / "vault")
            clients[name] = start(python, root / name / "home", root / name / "vault")
        people = sorted(p.stem for p in (corpus / "people").glob("*.md"))
        rng = random.Random(7)
        words = [w for p in people for w in p.lower().split("-")]
        calls = {
            "entity_hit": lambda i: ("entity", {"name": people[i % len(people)].replace("-", " ").title()}),
            "entity_miss": lambda i: ("entity", {"name": f"Nobody Called {i} Zyx"}),
            "recall_entity": lambda i: ("recall", {"entity": people[(i * 7) % len(people)].replace("-", " ").title()}),
            "recall_query": lambda i: ("recall", {"query": " ".join(rng.sample(words, 3)), "limit": 10}),
            # a new text every call, about a person: the write path (log, journal, homes)
            "remember": lambda i: ("remember", {"fact": f"Bench note {i} {rng.random():.6f}", "provenance": "bench",
                                                "entity": people[(i * 11) % len(people)].replace("-", " ").title()}),
        }
        for bench, make in calls.items():
            lat: dict[str, list[float]] = {"this": [], "baseline": []}
            for i in range(ns.calls):
                name, args = make(i)
                order = ("this", "baseline") if i % 2 == 0 else ("baseline", "this")
                for side in order:
                    t0 = time.perf_counter()
                    _body, err = clients[side].call(name, args)
                    lat[side].append((time.perf_counter() - t0) * 1000)
                    if err:
                        raise SystemExit(f"{side} {name} {args}: {_body}")
            p50 = {s: statistics.median(v) for s, v in lat.items()}
            print(json.dumps({"bench": bench, "n": ns.calls, "this_p50_ms": round(p50["this"], 2),
                              "this_p99_ms": pct(lat["this"], 0.99), "baseline_p50_ms": round(p50["baseline"], 2),
                              "baseline_p99_ms": pct(lat["baseline"], 0.99),
                              "ratio_p50": round(p50["this"] / p50["baseline"], 3),
                              "loadavg": round(os.getloadavg()[0], 2)}), flush=True)
        # a page moved: does its old slug still open the card with its facts?
        moved = next(p for p in people if clients["this"].call("recall", {"entity": f"people/{p}"})[0].get("facts"))
        for side, client in clients.items():
            vault = root / side / "vault"
            src = vault / "people" / f"{moved}.md"
            (vault / "archive").mkdir(exist_ok=True)
            os.rename(src, vault / "archive" / f"{moved}.md")
        for side, client in clients.items():
            deadline = time.monotonic() + 15
            while True:   # until the daemon has indexed both sides of the move (or 15 s)
                there, _ = client.call("list_pages", {"prefix": "archive/"})
                here, _ = client.call("list_pages", {"prefix": f"people/{moved}", "limit": 200})
                gone = f"people/{moved}" not in {p["slug"] for p in here.get("pages", [])}
                if (there.get("pages") and gone) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            body, _ = client.call("entity", {"name": f"people/{moved}"})
            card = body.get("card") or {}
            print(json.dumps({"bench": "old_slug_after_move", "side": side, "found": body.get("found"),
                              "slug": (card.get("entity") or {}).get("slug"),
                              "active_fact_count": card.get("active_fact_count")}), flush=True)
    finally:
        for client in clients.values():
            client.close()
        for name, python in sides.items():
            stop(python, root / name / "home")
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
