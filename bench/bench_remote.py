"""The remote-brain client (daemon/client/remote.py) against `brain serve --http` on loopback.

    python bench/bench_remote.py [--calls 300] [--runs 20]

Starts a daemon on a copy of sample_brain/ and `brain serve --http --port 0`
in a private BRAIN_HOME, creates a bearer token, and prints JSON lines, each
with the load average (the machine is shared):

- `remote_send_warm`: p50/p99 ms of one `HttpMcp.send("recall", {"entity": …})`
  on a warm session (after ten warm-up calls), straight to the server;
- `remote_cli_recall`: the wall time of a whole `brain recall --entity X
  --remote NAME` (a second BRAIN_HOME, connected with `brain connect`), median
  of `--runs` after two warm-up runs, and the TCP connections each run opened,
  counted by a loopback forwarder in front of the server
  (tests/tcp_forwarder.py); once on bare loopback (`rtt_ms` 0) and once with
  the forwarder playing a network of `--rtt-ms` round trip (each new
  connection waits one round trip for its TCP handshake; a TLS handshake
  would add another).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from bench_http import BRAIN, emit, http_brain  # noqa: E402
from tcp_forwarder import Forwarder  # noqa: E402

from brain.daemon.client.remote import HttpMcp  # noqa: E402
from brain.daemon.server.usage_stats import percentile as pct  # noqa: E402


def warm_sends(url: str, token: str, calls: int, entity: str) -> list[float]:
    client = HttpMcp(url, token)
    try:
        for _ in range(10):  # open the session, warm the connection and the daemon's caches
            client.send("recall", {"entity": entity})
        lat = []
        for _ in range(calls):
            t0 = time.perf_counter()
            body, is_error = client.send("recall", {"entity": entity})
            lat.append((time.perf_counter() - t0) * 1000)
            assert not is_error and body["facts"], body
        return lat
    finally:
        client.close()


def cli_runs(env: dict, fwd: Forwarder, runs: int, entity: str) -> tuple[list[float], list[int]]:
    argv = [BRAIN, "recall", "--entity", entity, "--remote", "bench", "--json"]
    for _ in range(2):
        subprocess.run(argv, env=env, capture_output=True, check=True, timeout=60)
    walls, conns = [], []
    for _ in range(runs):
        before = fwd.accepted
        t0 = time.perf_counter()
        r = subprocess.run(argv, env=env, capture_output=True, timeout=60)
        walls.append((time.perf_counter() - t0) * 1000)
        assert r.returncode == 0 and json.loads(r.stdout)["facts"], r.stderr
        conns.append(fwd.accepted - before)
    return walls, conns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--entity", default="people/priya-raman")
    ap.add_argument("--rtt-ms", type=float, default=20.0)
    ns = ap.parse_args()
    with http_brain(ns.entity, "bench-remote-") as (env, url, token):
        client_env = dict(env, BRAIN_HOME=str(Path(env["BRAIN_HOME"]) / "client-home"))  # another machine
        lat = warm_sends(url, token, ns.calls, ns.entity)
        emit(bench="remote_send_warm", calls=len(lat), p50_ms=round(pct(lat, 50), 2), p99_ms=round(pct(lat, 99), 2))
        for rtt_ms in (0.0, ns.rtt_ms):
            fwd = Forwarder(url, rtt_s=rtt_ms / 1000)
            try:
                subprocess.run([BRAIN, "connect", fwd.url, "--token", token, "--name", "bench"], env=client_env,
                               capture_output=True, check=True, timeout=60)
                walls, conns = cli_runs(client_env, fwd, ns.runs, ns.entity)
            finally:
                fwd.close()
            emit(bench="remote_cli_recall", rtt_ms=rtt_ms, runs=len(walls), median_ms=round(statistics.median(walls), 1),
                 min_ms=round(min(walls), 1), tcp_connections_per_run=statistics.median(conns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
