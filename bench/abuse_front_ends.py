"""Abuse of `brain serve`'s two front ends, phases 4 and 5 of bench_abuse.py:
an idle and half-sent connection flood on `brain serve --http` with
legitimate calls during it, and daemon kills under the stdio relay with calls
in flight.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from abuse_judge import MARKER, MIXED, Tally

BRAIN = str(Path(sys.executable).parent / "brain")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "abuse", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def daemon_pid(places, vault) -> int | None:
    from brain.daemon.rendezvous import read_pid_file

    info = read_pid_file(places, vault) or {}
    return info.get("pid") if isinstance(info.get("pid"), int) else None


# -- 4. HTTP idle flood -------------------------------------------------------

def http_flood(env: dict, places, tally: Tally, idle: int, legit: int) -> dict:
    import re

    from brain.daemon.http.tokens import create_token

    token = create_token(places, "abuse", can_write=True)
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    url = None
    for line in proc.stderr:
        m = re.search(r"MCP on (http://\S+/mcp)", line)
        if m:
            url = m.group(1)
            break
    assert url, "the HTTP server did not start"
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    flood = []
    ok = failed = 0
    times = []
    try:
        for i in range(idle):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            if i % 3 == 1:
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            elif i % 3 == 2:
                s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 500\r\n\r\n{{".encode())
            flood.append(s)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Authorization": f"Bearer {token}"}
        for i in range(legit):
            t0 = time.monotonic()
            try:
                msg = _http_call(url, headers, i)
                ok += 1
                tally.answer(msg, remote=True, request=MIXED[i % len(MIXED)])
            except (OSError, urllib.error.URLError, ValueError):
                failed += 1
            times.append((time.monotonic() - t0) * 1000)
        closed_by_server = 0
        for s in flood:
            ready, _, _ = select.select([s], [], [], 0)
            if ready:
                try:
                    closed_by_server += s.recv(1) == b""
                except OSError:
                    closed_by_server += 1
    finally:
        for s in flood:
            s.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    times.sort()
    return {"idle_connections": idle, "legit_calls_ok": ok, "legit_calls_failed": failed,
            "legit_p50_ms": round(times[len(times) // 2], 1) if times else None,
            "legit_max_ms": round(times[-1], 1) if times else None, "closed_by_server_during_run": closed_by_server}


def _http_call(url: str, headers: dict, i: int) -> dict:
    """initialize, then one tools/call, on a fresh MCP session; the call's JSON-RPC answer."""
    def post(body: dict, extra: dict) -> tuple[dict, dict]:
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={**headers, **extra})
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read().decode()
            hdrs = dict(r.headers)
        if not raw.strip():
            return {}, hdrs  # a notification's 202
        if raw.lstrip().startswith("{"):
            return json.loads(raw), hdrs
        data = [ln[5:].strip() for ln in raw.splitlines() if ln.startswith("data:")]
        return json.loads(data[-1]), hdrs

    _, hdrs = post(INIT, {})
    sid = {k: v for k, v in hdrs.items() if k.lower() == "mcp-session-id"}
    post(INITIALIZED, sid)
    name, args = MIXED[i % len(MIXED)]
    msg, _ = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": args}}, sid)
    return msg


# -- 5. relay across kills ----------------------------------------------------

def relay_kills(env: dict, places, vault, tally: Tally, rounds: int) -> dict:
    """Kill the daemon under a `brain serve` with calls in flight; a relay that exits is counted and respawned."""
    state = {"proc": None, "buf": bytearray()}
    exits = retried = unanswered = 0

    def spawn() -> None:
        state["proc"] = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, env=env)
        state["buf"] = bytearray()
        send(INIT, INITIALIZED)
        read(1)

    def read(rid, timeout=20.0):
        proc, buf = state["proc"], state["buf"]
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in buf:
                nl = buf.index(b"\n")
                msg = json.loads(bytes(buf[:nl]))
                del buf[: nl + 1]
                if msg.get("id") == rid:
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                buf.extend(chunk)

    def send(*msgs) -> None:
        try:
            state["proc"].stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
            state["proc"].stdin.flush()
        except OSError:
            pass  # the relay is gone; counted below

    spawn()
    rid = 100
    for _ in range(rounds):
        ids = list(range(rid, rid + 10))
        rid += 10
        send(*({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "recall", "arguments": {"grep": MARKER}}} for i in ids))
        pid = daemon_pid(places, vault)
        if pid:
            os.kill(pid, signal.SIGKILL)
        for i in ids:
            msg = read(i)
            if msg is None:
                unanswered += 1
            elif "error" in msg and (msg["error"].get("data") or {}).get("retry"):
                retried += 1
            else:
                tally.answer(msg, remote=True, request={"grep": MARKER})
        send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}})
        tally.answer(read(rid), remote=True)
        rid += 1
        if state["proc"].poll() is not None:
            exits += 1
            spawn()
    tally.relay_exits += exits
    state["proc"].stdin.close()
    state["proc"].wait(15)
    return {"rounds": rounds, "in_flight_answered_retry": retried, "in_flight_unanswered": unanswered,
            "relay_exits": exits}
