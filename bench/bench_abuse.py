"""Faults and abuse, as JSON lines: does brain lose, leak, crash or go silent?

    python bench/bench_abuse.py [--seconds-per-phase N] [--writers N] [--kills N] [--seed N]

Against a private BRAIN_HOME and a copy of sample_brain/ (loopback only), in
about three minutes by default:

1. kill -9 of the daemon under concurrent writers (the CLI's own client,
   which restarts the daemon): every acknowledged fact must be in
   the facts logs afterwards;
2. mixed load: remote clients on the daemon socket calling every tool;
3. a seeded fuzz pass: hostile arguments for every tool, plus hostile raw
   lines (not UTF-8, deep nesting, huge integers, non-object arguments);
4. an idle and half-sent connection flood on `brain serve --http`, with
   legitimate calls during it;
5. `brain serve` across daemon kills, calls in flight;
6. the targeted attacks of `abuse_attacks.py` (a replaced or torn facts
   log, older copies of the log put back under four writers, reused ids,
   two synced copies, bad private marks, floods), each on
   daemons of its own, as a table of attempts / held / broke
   (`--no-attacks` skips them).

A private page and private facts carry a marker; any remote answer that
contains it is counted. The last line sums up: acknowledged writes lost,
errors by code, `internal` count, non-envelope answers to well-formed
JSON-RPC, relay exits, private markers seen remotely (targets: all 0).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from abuse_attacks import run_attacks, summary as attacks_summary, table as attacks_table  # noqa: E402
from abuse_front_ends import BRAIN, daemon_pid, http_flood, relay_kills  # noqa: E402
from abuse_judge import MARKER, MIXED, Tally  # noqa: E402
from bench_daemon import SocketClient  # noqa: E402  (one raw socket client for the benches)


class Session(SocketClient):
    """A session whose calls return the raw JSON-RPC answer (the bench judges its shape)."""

    def __init__(self, path: str, lane: str, timeout: float = 60.0):
        super().__init__(path, lane=lane, client="abuse", timeout=timeout)

    def call(self, name: str, args) -> dict:
        return self.call_raw(name, args)


def ensure_daemon(places, vault) -> str:
    from brain.daemon.client.spawn import connect_or_start

    s, _ = connect_or_start(places, vault)
    s.close()
    return str(places.socket_path(vault))


# -- 1. kill -9 under concurrent writers -------------------------------------

def kills_under_writers(places, vault, tally: Tally, writers: int, kills: int, seconds: float) -> dict:
    from brain.daemon.client.calls import send

    acked: list[tuple[str, str]] = []
    failures = collections.Counter()
    stop = threading.Event()

    def writer(w: int) -> None:
        i = 0
        while not stop.is_set():
            fact = f"writer {w} fact {i} survives"
            try:
                body, is_error = send(places, vault, "remember", {"fact": fact, "provenance": "abuse"})
            except Exception as e:  # a refused or broken connection: the write was not acknowledged
                failures[type(e).__name__] += 1
                time.sleep(0.05)
                continue
            if is_error:
                tally.answer({"result": {"content": [{"type": "text", "text": json.dumps(body)}]}}, remote=False)
            elif body.get("status") in ("inserted", "duplicate", "superseded"):
                with tally.lock:
                    acked.append((body["id"], fact))
            i += 1

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    done_kills = 0
    for _ in range(kills):
        time.sleep(seconds / (kills + 1))
        pid = daemon_pid(places, vault)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                done_kills += 1
            except ProcessLookupError:
                pass
    time.sleep(seconds / (kills + 1))
    stop.set()
    for t in threads:
        t.join(60)
    ensure_daemon(places, vault)
    logged = {}
    # every facts log: the shared one of older versions and this device's (docs/architecture.md)
    brain_dir = vault / ".brain"
    for path in [brain_dir / "facts.jsonl", *sorted((brain_dir / "facts").glob("*.jsonl"))]:
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("op", "insert") == "insert" and "fact" in rec:
                    logged[str(rec.get("id"))] = rec["fact"]
    lost = [fid for fid, fact in acked if logged.get(fid) != fact]
    return {"kills": done_kills, "writers": writers, "acknowledged_writes": len(acked),
            "acknowledged_writes_lost": len(lost), "unacknowledged_attempts": dict(failures)}


# -- 2. mixed load ------------------------------------------------------------

def mixed_load(path: str, tally: Tally, clients: int, calls: int) -> dict:
    def client(k: int) -> None:
        s = Session(path, "remote")
        for i in range(calls):
            name, args = MIXED[(i + k) % len(MIXED)]
            tally.answer(s.call(name, args), remote=True, request=args)
        s.close()

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"clients": clients, "calls": clients * calls, "seconds": round(time.monotonic() - started, 1)}


# -- 3. fuzz ------------------------------------------------------------------

def hostile_values(rng: random.Random) -> list:
    deep: object = "bottom"
    for _ in range(rng.randint(2, 40)):
        deep = [deep] if rng.random() < 0.5 else {"k": deep}
    return [None, "", " ", "\x00", "../../etc/passwd", "'; DROP TABLE facts; --", "%s%n{0}", "\u202e\U0001F600",
            "x" * rng.choice((1, 1999, 2001, 10_001, 100_000)), MARKER, "people/me", "secret/plan", "1", "-1", "0",
            0, -1, 1.5, 2**63, 10**400, -10**309, 1e308, True, False, [], [1, "a"], {}, {"a": {"b": 1}}, deep]


def fuzz(path: str, tally: Tally, seed: int, per_tool: int) -> dict:
    from brain.daemon.protocol.tools import ALL_TOOLS

    rng = random.Random(seed)
    s = Session(path, "remote")
    sent = 0
    for name, tool in sorted(ALL_TOOLS.items()):
        if name == "synthesize":
            continue  # an LLM call per case; covered by its own bench
        keys = [p.name for p in tool.params] + ["_meta", "dry_run", "unknown_key"]
        for _ in range(per_tool):
            pool = hostile_values(rng)
            args = {k: rng.choice(pool) for k in rng.sample(keys, rng.randint(0, len(keys)))}
            tally.answer(s.call(name, args), remote=True, request=args)
            sent += 1
    # lines that are not well-formed JSON-RPC: each must still be answered, with its id
    unanswered = 0
    raws = [(b'{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"recall","arguments":{"grep":"\xff"}}}', "r1"),
            (b'{"jsonrpc":"2.0","id":"r2","method":"tools/call","params":{"name":"recall","arguments":{"x":'
             + b"[" * 1100 + b"]" * 1100 + b"}}}", "r2"),
            (b'{"jsonrpc":"2.0","id":"r3","method":"tools/call","params":{"name":"recall","arguments":{"limit":'
             + b"9" * 5000 + b"}}}", "r3"),
            (b'{"jsonrpc":"2.0","id":"r4","method":"tools/call","params":{"name":"recall","arguments":[1]}}', "r4"),
            (b'{"jsonrpc":"2.0","id":"r5","method":"tools/call","params":{"name":"recall","arguments":{"grep":"\\udc00"}}}',
             "r5")]
    for line, rid in raws:
        s.raw(line)
        try:
            msg = s.wait(rid)
            tally.answer(msg, remote=True, well_formed=False)
        except (OSError, EOFError):
            unanswered += 1
            s = Session(path, "remote")
    s.close()
    return {"seed": seed, "fuzzed_calls": sent, "hostile_lines": len(raws), "hostile_lines_unanswered": unanswered}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds-per-phase", type=float, default=30.0, help="length of the kill phase")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--calls", type=int, default=100, help="mixed calls per client")
    ap.add_argument("--fuzz-per-tool", type=int, default=40)
    ap.add_argument("--idle", type=int, default=300)
    ap.add_argument("--relay-rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--no-attacks", action="store_true", help="skip the targeted attacks (phase 6)")
    ns = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="ba-", dir="/tmp"))
    vault = home / "vault"
    shutil.copytree(REPO / "sample_brain", vault, ignore=shutil.ignore_patterns(".brain"))
    (vault / "secret").mkdir(exist_ok=True)
    (vault / "secret" / "plan.md").write_text(f"---\nvisibility: private\n---\n# Plan\n\nThe code word is {MARKER}.\n")
    os.environ.update(BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    os.environ.pop("BRAIN_VAULT", None)
    env = dict(os.environ)
    from brain.daemon import config as config_mod
    from brain.daemon.client.calls import send
    from brain.daemon.places import Places

    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    tally = Tally()
    started = time.monotonic()
    try:
        ensure_daemon(places, vault)
        for i in range(3):
            send(places, vault, "remember", {"fact": f"{MARKER} private fact {i}", "provenance": "abuse",
                                                    "entity": "people/me", "visibility": "private"})
        phases = [
            ("abuse_kill_under_writers", lambda: kills_under_writers(places, vault, tally, ns.writers, ns.kills,
                                                                     ns.seconds_per_phase)),
            ("abuse_mixed_load", lambda: mixed_load(ensure_daemon(places, vault), tally, ns.clients, ns.calls)),
            ("abuse_fuzz", lambda: fuzz(ensure_daemon(places, vault), tally, ns.seed, ns.fuzz_per_tool)),
            ("abuse_http_idle_flood", lambda: http_flood(env, places, tally, ns.idle, 20)),
            ("abuse_relay_kills", lambda: relay_kills(env, places, vault, tally, ns.relay_rounds)),
        ]
        results = {}
        for name, run in phases:
            t0 = time.monotonic()
            results[name] = run()
            print(json.dumps({"bench": name, **results[name], "seconds": round(time.monotonic() - t0, 1)}), flush=True)
        summary = {
            "bench": "abuse_summary",
            "acknowledged_writes": results["abuse_kill_under_writers"]["acknowledged_writes"],
            "acknowledged_writes_lost": results["abuse_kill_under_writers"]["acknowledged_writes_lost"],
            "tool_calls": tally.calls,
            "errors_by_code": dict(sorted(tally.codes.items())),
            "internal": tally.codes.get("internal", 0),
            "non_envelope_answers": len(tally.non_envelope),
            "relay_exits": tally.relay_exits,
            "private_markers_seen_remotely": tally.markers,
            "http_legit_calls_failed": results["abuse_http_idle_flood"]["legit_calls_failed"],
            "seconds": round(time.monotonic() - started, 1),
            "loadavg": open("/proc/loadavg").read().split()[:3],
        }
        print(json.dumps(summary), flush=True)
        if not ns.no_attacks:
            rows = run_attacks()
            print(json.dumps(attacks_summary(rows)), flush=True)
            print(attacks_table(rows), flush=True)
        for sample in tally.non_envelope[:5]:
            print(json.dumps({"bench": "abuse_non_envelope_sample", "answer": sample}), flush=True)
        for sample in tally.leaks[:5]:
            print(json.dumps({"bench": "abuse_private_leak_sample", "answer": sample}), flush=True)
        return 0
    finally:
        subprocess.run([BRAIN, "daemon", "stop"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
