"""Daemon and transport timings, as JSON lines.

    python bench/bench_daemon.py [--vault DIR] [--embeddings] [--runs N] [--calls N]

Measures, against a private BRAIN_HOME and a copy of the vault (default
sample_brain/):

- `brain serve` spawned → `initialize` answered, with the daemon up
  (target ≤ 100 ms) and with no daemon running (target ≤ 1.5 s);
- `brain recall --entity X` wall time with the daemon up (median ≤ 150 ms);
- per-verb p50/p99 over one socket connection (the daemon's own latency
  plus the JSON-RPC round trip).

Each line: {"bench", "n", "p50_ms", "p99_ms", "median_ms", "target_ms", "meets_target", ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brain.daemon.server.usage_stats import percentile as pct

REPO = Path(__file__).resolve().parents[1]
BRAIN = str(Path(sys.executable).parent / "brain")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def emit(name: str, samples_ms: list[float], target_ms: float | None = None, **extra) -> None:
    line = {"bench": name, "n": len(samples_ms),
            "median_ms": round(statistics.median(samples_ms), 1),
            "p50_ms": round(pct(samples_ms, 50), 1), "p99_ms": round(pct(samples_ms, 99), 1),
            "min_ms": round(min(samples_ms), 1), "max_ms": round(max(samples_ms), 1)}
    if target_ms is not None:
        line["target_ms"] = target_ms
        line["meets_target"] = line["median_ms"] <= target_ms
    line.update(extra)
    print(json.dumps(line), flush=True)


def serve_to_initialize(env: dict) -> float:
    """Spawn `brain serve`, send initialize, wait for its answer; ms."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(json.dumps(INIT).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    dt = (time.perf_counter() - t0) * 1000
    assert json.loads(line)["id"] == 1, line
    proc.stdin.close()
    proc.wait(10)
    return dt


def stop_daemon(env: dict) -> None:
    subprocess.run([BRAIN, "daemon", "stop"], env=env, capture_output=True, timeout=30)


class SocketClient:
    """One MCP session over the daemon socket, raw JSON-RPC lines (the local lane by default)."""

    def __init__(self, path: str, lane: str = "local", client: str = "bench", timeout: float | None = None):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = bytearray()
        self.next_id = 10
        self.raw(json.dumps({"surface": "full", "lane": lane, "client": client}).encode())
        self.send(INIT)
        self.wait(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def raw(self, line: bytes) -> None:
        self.s.sendall(line + b"\n")

    def send(self, msg: dict) -> None:
        self.raw(json.dumps(msg).encode())

    def wait(self, rid) -> dict:
        """The next message with this id (others are dropped)."""
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                msg = json.loads(bytes(self.buf[:nl]))
                del self.buf[: nl + 1]
                if msg.get("id") == rid:
                    return msg
                continue
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise EOFError("the daemon closed the connection")
            self.buf += chunk

    def call_raw(self, name: str, args) -> dict:
        """The JSON-RPC answer to one tools/call, as it came."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
        return self.wait(self.next_id)

    def call(self, name: str, args: dict) -> tuple[dict, bool]:
        res = self.call_raw(name, args)["result"]
        return json.loads(res["content"][0]["text"]), bool(res.get("isError"))

    def close(self) -> None:
        self.s.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", default=str(REPO / "sample_brain"))
    ap.add_argument("--embeddings", action="store_true", help="load the embedding model in the daemon")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    ns = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="bd-", dir="/tmp"))
    vault = home / "vault"
    shutil.copytree(ns.vault, vault, ignore=shutil.ignore_patterns(".brain"))
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    from brain.daemon import config as config_mod
    from brain.daemon.places import Places

    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": bool(ns.embeddings)})
    try:
        # cold: no daemon running; the relay starts one
        cold = []
        for _ in range(ns.cold_runs):
            stop_daemon(env)
            cold.append(serve_to_initialize(env))
        emit("serve_initialize_no_daemon", cold, 1500, embeddings=ns.embeddings)
        if ns.embeddings:
            time.sleep(15)  # let the model load finish before the warm figures
        warm = [serve_to_initialize(env) for _ in range(ns.runs)]
        emit("serve_initialize_daemon_up", warm, 100)

        sock_path = str(places.socket_path(vault))
        client = SocketClient(sock_path)
        pages = client.call("list_pages", {"limit": 50})[0]
        slugs = [p["slug"] for p in pages.get("pages", [])] or ["people/me"]
        entity = next((s for s in slugs if s.startswith("people/")), slugs[0])

        recall_cli = []
        for _ in range(ns.runs * 2):
            t0 = time.perf_counter()
            r = subprocess.run([BRAIN, "recall", "--entity", entity], env=env, capture_output=True)
            recall_cli.append((time.perf_counter() - t0) * 1000)
            assert r.returncode == 0, r.stderr
        emit("cli_recall_entity_daemon_up", recall_cli, 60, entity=entity)  # issue target: median ≤ 60 ms

        ids = []
        calls = {
            "remember": lambda i: ("remember", {"fact": f"bench fact {i}", "provenance": "bench",
                                                "entity": slugs[i % len(slugs)]}),
            "recall_entity": lambda i: ("recall", {"entity": slugs[i % len(slugs)]}),
            "recall_query": lambda i: ("recall", {"query": ["project status", "who works on", "meeting notes",
                                                           "pricing decision"][i % 4], "limit": 10}),
            "entity": lambda i: ("entity", {"name": slugs[i % len(slugs)]}),
            "context_pack": lambda i: ("context_pack", {"entities": ",".join(slugs[i % len(slugs):][:3]),
                                                        "budget_tokens": 1500}),
            "delta": lambda i: ("delta", {"since": "2020-01-01", "budget_tokens": 2000}),
            "forget": lambda i: ("forget", {"id": ids[i % len(ids)] if ids else "1"}),
        }
        for label, make in calls.items():
            lat, errors = [], 0
            for i in range(ns.calls):
                name, args = make(i)
                t0 = time.perf_counter()
                body, is_error = client.call(name, args)
                lat.append((time.perf_counter() - t0) * 1000)
                if label == "remember" and not is_error:
                    ids.append(body["id"])
                errors += is_error
            emit(f"socket_{label}", lat, None, errors=errors)
    finally:
        stop_daemon(env)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
