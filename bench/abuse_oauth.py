"""Abuse of the wire and of OAuth on `brain serve --http` (real daemon, real HTTP server, loopback only).

- "OAuth registration flood": N registrations as fast as they go; the store
  must stay bounded and the excess be refused (429 or a cap), never stored.
- "unauthenticated slow bodies": M connections send headers without a valid
  credential and then a body one byte a second, while K authenticated calls
  run; not one of them may fail.
- "invalid request ids": requests whose id is null, 1.5, an object, an array
  or a boolean, on the daemon's socket and over HTTP; each must be answered
  (Invalid Request, id null).

- "oversized bodies": a body declared 300 MB, or chunked past any limit, to
  every endpoint with and without a credential; each must be refused at
  once, and the server's peak memory is reported.
- "registration lockout": the store flooded with registrations while the
  owner's client registers, asks and is approved 21 times; each must get in
  and stay.

Each attack gets an empty folder, stops every process it started, and
returns attempts / held / broke plus its figures.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

BRAIN = str(Path(sys.executable).parent / "brain")
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "abuse", "version": "1"}}}
BAD_IDS = (b"null", b"1.5", b"{}", b"[1]", b"true", b'{"a":[1]}', b"-0.5", b"1e3")


class _Server:
    """A vault with one page, its daemon, and `brain serve --http` on a free loopback port."""

    def __init__(self, scratch: Path):
        from brain.daemon import config as config_mod
        from brain.daemon.http.tokens import create_token
        from brain.daemon.places import Places

        self.vault = scratch / "vault"
        (self.vault / "people").mkdir(parents=True)
        (self.vault / "people" / "ada.md").write_text("# Ada\n\nAda writes the engine notes.\n")
        self.env = {**os.environ, "BRAIN_HOME": str(scratch / "home"), "BRAIN_VAULT": str(self.vault),
                    "HF_HUB_OFFLINE": "1"}
        self.places = Places.from_env({"BRAIN_HOME": str(scratch / "home")})
        config_mod.save(self.places.config_file, {"vault": str(self.vault), "embeddings.enabled": False})
        self.token = create_token(self.places, "abuse", can_write=True)
        self.proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env, text=True)
        self.url = None
        for line in self.proc.stderr:
            m = re.search(r"MCP on (http://\S+/mcp)", line)
            if m:
                self.url = m.group(1)
                break
        if self.url is None:
            self.stop()
            raise RuntimeError("brain serve --http did not start")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()   # keep its pipe drained
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        self.base = self.url.rsplit("/mcp", 1)[0]

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        subprocess.run([BRAIN, "daemon", "stop"], env=self.env, capture_output=True, timeout=30)

    def post(self, path: str, body: bytes, headers: dict) -> tuple[int, bytes, dict]:
        req = urllib.request.Request(self.base + path, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)


def registration_flood(scratch: Path, registrations: int = 1000) -> dict:
    server = _Server(scratch)
    statuses: dict[int, int] = {}
    try:
        store = server.places.state_dir / "oauth.json"
        meta = json.dumps({"client_name": "flood", "redirect_uris": ["http://127.0.0.1:9/cb"],
                           "grant_types": ["authorization_code"], "response_types": ["code"],
                           "token_endpoint_auth_method": "none"}).encode()
        for _ in range(registrations):
            status, _, _ = server.post("/register", meta, {"Content-Type": "application/json"})
            statuses[status] = statuses.get(status, 0) + 1
        clients = len(json.loads(store.read_text())["clients"]) if store.exists() else 0
        size = store.stat().st_size if store.exists() else 0
    finally:
        server.stop()
    from brain.daemon.http.oauth_store import MAX_CLIENTS

    refused = registrations - statuses.get(201, 0)
    broke = max(0, clients - MAX_CLIENTS) + sum(n for s, n in statuses.items() if s >= 500)
    return {"attempts": registrations, "held": registrations - broke, "broke": broke,
            "note": f"{statuses.get(201, 0)} registered, {refused} refused ({statuses}); store holds "
                    f"{clients} clients in {size} bytes (cap {MAX_CLIENTS})",
            "clients_stored": clients, "store_bytes": size}


def slow_bodies(scratch: Path, held_connections: int = 230, calls: int = 60) -> dict:
    server = _Server(scratch)
    stop = threading.Event()
    sockets: list[socket.socket] = []
    failures = 0
    times = []
    try:
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer nope\r\n"
                "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{").encode()
        for _ in range(held_connections):
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                s.sendall(head)
                sockets.append(s)
            except OSError:
                pass

        def dribble() -> None:
            while not stop.wait(1.0):
                for s in sockets:
                    try:
                        s.sendall(b" ")
                    except OSError:
                        pass
        threading.Thread(target=dribble, daemon=True).start()
        time.sleep(2.0)
        auth = {**HEADERS, "Authorization": f"Bearer {server.token}"}
        for _ in range(calls):
            t0 = time.monotonic()
            try:
                status, _, _ = server.post("/mcp", json.dumps(INIT).encode(), auth)
                failures += status != 200
            except OSError:
                failures += 1
            times.append((time.monotonic() - t0) * 1000)
        still_open = sum(not _closed_by_server(s) for s in sockets)
    finally:
        stop.set()
        for s in sockets:
            s.close()
        server.stop()
    times.sort()
    return {"attempts": calls, "held": calls - failures, "broke": failures,
            "note": f"{held_connections} unauthenticated slow bodies; {calls - failures}/{calls} authenticated "
                    f"calls answered; {still_open} slow bodies still open at the end",
            "failed_calls": failures, "slow_bodies_open": still_open,
            "call_p50_ms": round(times[len(times) // 2], 1) if times else None,
            "call_max_ms": round(times[-1], 1) if times else None}


def _closed_by_server(s: socket.socket) -> bool:
    """True when the server closed the connection (after whatever answer it sent first, e.g. a 401)."""
    s.setblocking(False)
    try:
        while True:
            if s.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def _call_line(raw_id: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"tools/call","params":{"name":"whoami","arguments":{}}}'


def invalid_ids(scratch: Path) -> dict:
    server = _Server(scratch)
    attempts = answered = 0
    try:
        auth = {**HEADERS, "Authorization": f"Bearer {server.token}"}
        status, _, headers = server.post("/mcp", json.dumps(INIT).encode(), auth)
        auth.update({"mcp-session-id": headers.get("mcp-session-id", ""), "mcp-protocol-version": "2025-06-18"})
        for raw in BAD_IDS:
            attempts += 1
            status, body, _ = server.post("/mcp", _call_line(raw), auth)
            try:
                msg = json.loads(body)
                answered += msg.get("id") is None and msg.get("error", {}).get("code") == -32600
            except ValueError:
                pass
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(server.places.socket_path(server.vault)))
            s.sendall(json.dumps({"surface": "full", "lane": "remote", "client": "abuse"}).encode() + b"\n"
                      + json.dumps(INIT).encode() + b"\n")
            reader = s.makefile("rb")
            reader.readline()
            for raw in BAD_IDS:
                attempts += 1
                s.sendall(_call_line(raw) + b"\n")
                try:
                    msg = json.loads(reader.readline())
                    answered += msg.get("id") is None and msg.get("error", {}).get("code") == -32600
                except (OSError, ValueError):
                    pass
    finally:
        server.stop()
    return {"attempts": attempts, "held": answered, "broke": attempts - answered,
            "note": f"{answered}/{attempts} requests with an invalid id answered (HTTP and socket)"}


def _memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def _big_body(server: "_Server", path: str, declared: bool, token: str | None, streamed: int) -> tuple[int | None, float]:
    """POST a body declared (or chunked) far over any limit, streaming `streamed` bytes; (status, seconds)."""
    head = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}",
            "Content-Type: application/x-www-form-urlencoded", "Accept: application/json, text/event-stream",
            "Content-Length: 314572800" if declared else "Transfer-Encoding: chunked"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    s.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    started, done = time.monotonic(), threading.Event()

    def pump() -> None:
        piece, sent = b"a=" + b"x" * (256 * 1024 - 2), 0
        try:
            while sent < streamed and not done.is_set():
                s.sendall(piece if declared else f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                sent += len(piece)
        except OSError:
            pass

    writer = threading.Thread(target=pump, daemon=True)
    writer.start()
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    took = time.monotonic() - started
    done.set()
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    writer.join(30)
    s.close()
    return (int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None), took


def oversized_bodies(scratch: Path, streamed: int = 32 * 1024 * 1024) -> dict:
    """Every endpoint, with and without a credential, a body declared 300 MB or chunked past any limit."""
    server = _Server(scratch)
    rows = []
    try:
        before = _memory_mb(server.proc.pid)
        for path in ("/revoke", "/token", "/register", "/authorize", "/mcp", "/oauth/approve", "/nowhere"):
            for token in (None, server.token):
                for declared in (True, False):
                    status, took = _big_body(server, path, declared, token, streamed)
                    rows.append((path, bool(token), declared, status, took))
        after = _memory_mb(server.proc.pid)
    finally:
        server.stop()
    # a chunked body a route answers without reading (401, 404, 405) is refused before it is read too
    held = [r for r in rows if r[4] < 2 and (r[3] == 413 or (not r[2] and r[3] in (401, 404, 405)))]
    grew = after["VmHWM"] - before["VmRSS"]
    return {"attempts": len(rows), "held": len(held), "broke": len(rows) - len(held),
            "rss_before_mb": before["VmRSS"], "peak_after_mb": after["VmHWM"], "grew_mb": round(grew, 1),
            "slowest_answer_s": round(max(r[4] for r in rows), 3),
            "note": f"{len(rows)} bodies ({streamed >> 20} MB streamed each, 300 MB declared or chunked): "
                    f"{sorted({r[3] for r in rows}, key=str)} answered; RSS {before['VmRSS']} MB -> peak "
                    f"{after['VmHWM']} MB"}


def registration_lockout(scratch: Path, flood: int = 600) -> dict:
    """A flood fills the store, the owner's client registers and asks mid-flood, the owner approves it."""
    from brain.daemon.http.oauth_store import MAX_CLIENTS, OAuthStore, OAuthStoreFull
    from brain.daemon.places import Places

    store = OAuthStore(Places.from_env({"BRAIN_HOME": str(scratch / "home")}))
    refused = 0
    for i in range(MAX_CLIENTS):
        store.add_client(f"flood-{i}", "flood", {})
    real = 0
    for attempt in range(21):   # the owner's client, between flood bursts
        for i in range(flood // 21):
            store.add_client(f"flood-{attempt}-{i}", "flood", {})
        try:
            store.add_client(f"real-{attempt}", "owner's agent", {})
            _rid, code = store.add_pending(f"real-{attempt}", {"scopes": ["read"]})
            real += store.approve(code) is not None
            with store.edit() as d:   # the approved request is consumed as the token exchange would
                d["pending"].clear()
        except OAuthStoreFull:
            refused += 1
    for i in range(flood):
        store.add_client(f"flood-after-{i}", "flood", {})
    kept = sum(1 for k in store.snapshot()["clients"] if k.startswith("real-"))
    return {"attempts": 21, "held": min(real, kept), "broke": 21 - min(real, kept),
            "note": f"{real} of 21 real registrations approved ({refused} refused) while the store was flooded; "
                    f"{kept} kept after {flood} more flood registrations (cap {MAX_CLIENTS})"}


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("OAuth registration flood", registration_flood),
    ("unauthenticated slow bodies", slow_bodies),
    ("invalid request ids", invalid_ids),
    ("oversized bodies", oversized_bodies),
    ("registration lockout", registration_lockout),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
