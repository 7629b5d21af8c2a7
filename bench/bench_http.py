"""recall(entity) over `brain serve --http` on loopback, with the MCP SDK's client.

    python bench/bench_http.py [--calls 300] [--sessions 3]

Starts a daemon on a copy of sample_brain/ and `brain serve --http --port 0`
in a private BRAIN_HOME, creates a bearer token, and times tools/call
recall(entity) from the SDK's Streamable HTTP client, one session after
another. Prints one JSON line per session and one over all calls, with the
load average (the machine is shared). Target: p50 ≤ 3 ms, p99 ≤ 10 ms.
A last line times the same calls from a bare keep-alive HTTP client on a
socket: the server's share, without the SDK client's own work (compare
`bench/bench_daemon.py`'s per-verb figures for the daemon socket alone).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from brain.daemon.server.usage_stats import percentile as pct

REPO = Path(__file__).resolve().parents[1]
BRAIN = str(Path(sys.executable).parent / "brain")
TARGET = {"p50_ms": 3.0, "p99_ms": 10.0}


def emit(**kw) -> None:
    kw["loadavg"] = round(os.getloadavg()[0], 2)
    print(json.dumps(kw), flush=True)


def start_http(env: dict) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    for line in proc.stderr:
        m = re.search(r"MCP on (http://\S+/mcp)", line)
        if m:
            return proc, m.group(1)
    raise SystemExit("the HTTP server did not start")


async def one_session(url: str, token: str, calls: int, entity: str) -> list[float]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    lat = []
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as hc:
        async with streamable_http_client(url, http_client=hc) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                for _ in range(10):  # warm the connection and the daemon's caches
                    await s.call_tool("recall", {"entity": entity})
                for _ in range(calls):
                    t0 = time.perf_counter()
                    res = await s.call_tool("recall", {"entity": entity})
                    lat.append((time.perf_counter() - t0) * 1000)
                    assert not res.is_error, res
    return lat


def raw_session(url: str, token: str, calls: int, entity: str) -> list[float]:
    """The same calls from a minimal HTTP/1.1 keep-alive client on a plain socket: the server's
    share of the latency, without the SDK client's own work."""
    import socket

    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answers = sock.makefile("rb")
    session: dict = {}

    def post(msg: dict) -> bytes:
        body = json.dumps(msg).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in {
            "Host": f"{host}:{port}", "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "Content-Length": len(body), **session}.items())
        sock.sendall(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body)
        status, headers = answers.readline(), {}
        while (line := answers.readline()) not in (b"\r\n", b""):
            k, v = line.decode().split(":", 1)
            headers[k.strip().lower()] = v.strip()
        assert b" 20" in status and "content-length" in headers, (status, headers)
        if "mcp-session-id" in headers:
            session.update({"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"})
        return answers.read(int(headers["content-length"]))

    post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    lat = []
    for i in range(calls + 10):
        t0 = time.perf_counter()
        answer = json.loads(post({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
                                  "params": {"name": "recall", "arguments": {"entity": entity}}}))
        if i >= 10:  # the first ten warm the connection and the daemon's caches
            lat.append((time.perf_counter() - t0) * 1000)
        assert not answer["result"].get("isError"), answer
    sock.close()
    return lat


@contextlib.contextmanager
def http_brain(entity: str, prefix: str = "bench-http-"):
    """A daemon on a copy of sample_brain/ with one fact about `entity` and `brain serve --http` in
    front of it, in a private BRAIN_HOME: (env, url, token); all stopped and removed afterwards."""
    home = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    vault = home / "vault"
    shutil.copytree(REPO / "sample_brain", vault, ignore=shutil.ignore_patterns(".brain"))
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    from brain.daemon import config as config_mod
    from brain.daemon.http.tokens import create_token
    from brain.daemon.places import Places

    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    token = create_token(places, "bench", can_write=True)
    subprocess.run([BRAIN, "remember", "Priya leads the ledger work", "-p", "bench", "-e", entity],
                   env=env, capture_output=True, check=True)
    proc, url = start_http(env)
    try:
        yield env, url, token
    finally:
        proc.terminate()
        proc.wait(10)
        subprocess.run([BRAIN, "daemon", "stop"], env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--entity", default="people/priya-raman")
    ns = ap.parse_args()
    with http_brain(ns.entity) as (_, url, token):
        every = []
        for i in range(ns.sessions):
            lat = anyio.run(one_session, url, token, ns.calls, ns.entity)
            every += lat
            emit(bench="http_recall_entity", session=i, calls=len(lat), p50_ms=round(pct(lat, 50), 2),
                 p99_ms=round(pct(lat, 99), 2))
        emit(bench="http_recall_entity_all", calls=len(every), p50_ms=round(pct(every, 50), 2),
             p99_ms=round(pct(every, 99), 2), target=TARGET,
             meets_target=pct(every, 50) <= TARGET["p50_ms"] and pct(every, 99) <= TARGET["p99_ms"])
        raw = raw_session(url, token, ns.calls, ns.entity)
        emit(bench="http_recall_entity_raw_client", calls=len(raw), p50_ms=round(pct(raw, 50), 2),
             p99_ms=round(pct(raw, 99), 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
