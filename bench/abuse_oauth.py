"""Abuse of the wire and of OAuth on `brain serve --http` (real daemon, real HTTP server, loopback only).

- "OAuth registration flood": N registrations as fast as they go; the store
  must stay bounded and the excess be refused (429 or a cap), never stored.
- "unauthenticated slow bodies": M connections send headers without a valid
  credential and then a body one byte a second, while K authenticated calls
  run; not one of them may fail.
- "invalid request ids": requests whose id is null, 1.5, an object, an array
  or a boolean, on the daemon's socket and over HTTP; each must be answered
  (Invalid Request, id null).

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


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("OAuth registration flood", registration_flood),
    ("unauthenticated slow bodies", slow_bodies),
    ("invalid request ids", invalid_ids),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
