"""One long-lived daemon connection per HTTP session (docs/protocol.md §1.4 runs in the daemon).

`brain serve --http` forwards every tools/call to the daemon's Unix socket.
Opening a socket and replaying the MCP handshake for each call cost more
than the call itself, so each HTTP session keeps one connection: the
preamble (surface, client id, read-only claim) and the handshake are sent
once, then calls are multiplexed on it by JSON-RPC id, from any worker
thread, answered by one reader thread.

A link whose identity changes (a client rescoped, or its write scope
revoked) is replaced, never reused. A link whose daemon went away fails the
calls in flight with `DaemonCallError`; the next call opens a fresh one
(starting a daemon when none runs). Idle links are closed after
`IDLE_CLOSE_S`, and at most `MAX_LINKS` stay open (least recently used go first).
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from typing import Callable

from ..client.calls import PROTOCOL_VERSION, DaemonCallError, answer_body, json_line

log = logging.getLogger("brain.http.link")

IDLE_CLOSE_S = 30 * 60.0
MAX_LINKS = 256
# a call never waits longer than this for its answer (synthesize is the slowest)
CALL_TIMEOUT_S = 15 * 60.0


class DaemonLink:
    """A multiplexed MCP connection to the daemon for one caller identity."""

    def __init__(self, connect: Callable[[], socket.socket], preamble: dict):
        self.preamble = preamble
        self.last_used = time.monotonic()
        self._ids = itertools.count(2)
        self._pending: dict[int, Future] = {}
        # re-entrant: a failed send fails the link while holding it
        self._lock = threading.RLock()
        self._sock = connect()
        self.alive = True
        client = preamble.get("client", "brain-http")
        self._send_all([
            preamble,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": client, "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ])
        threading.Thread(target=self._read_loop, name="brain-daemon-link", daemon=True).start()

    def _send_all(self, msgs: list) -> None:
        self._sock.sendall(b"".join(json_line(m) for m in msgs))

    def send(self, name: str, arguments) -> tuple[dict, bool]:
        """One tools/call; raises DaemonCallError when the daemon does not answer."""
        fut: Future = Future()
        with self._lock:
            if not self.alive:
                raise DaemonCallError("the connection to the daemon is closed")
            rid = next(self._ids)
            self._pending[rid] = fut
            self.last_used = time.monotonic()
            try:
                self._send_all([{"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                 "params": {"name": name, "arguments": arguments}}])
            except OSError as e:
                self._pending.pop(rid, None)
                self._fail(f"the daemon connection broke: {e}")
                raise DaemonCallError(str(e)) from None
        msg = fut.result(CALL_TIMEOUT_S)
        self.last_used = time.monotonic()
        return answer_body(msg)

    def _read_loop(self) -> None:
        buf = bytearray()
        try:
            while True:
                chunk = self._sock.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
                while (nl := buf.find(b"\n")) >= 0:
                    line = bytes(buf[:nl])
                    del buf[: nl + 1]
                    if line.strip():
                        self._deliver(json.loads(line))
        except (OSError, ValueError) as e:
            log.debug("daemon link read failed: %s", e)
        self._fail("the daemon closed the connection before answering")

    def _deliver(self, msg: dict) -> None:
        rid = msg.get("id")
        if rid is None and "error" in msg:  # the preamble was refused: nothing on this link can succeed
            self._fail(f"the daemon refused the connection: {(msg['error'] or {}).get('message')}")
            return
        with self._lock:
            fut = self._pending.pop(rid, None) if isinstance(rid, int) else None
        if fut is not None:
            fut.set_result(msg)
        elif rid == 1 and "error" in msg:
            self._fail(f"the daemon refused the handshake: {(msg['error'] or {}).get('message')}")

    def _fail(self, why: str) -> None:
        with self._lock:
            self.alive = False
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(DaemonCallError(why))
        self.close()

    def close(self) -> None:
        self.alive = False
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


class DaemonLinks:
    """The open links, keyed by (HTTP session, caller identity)."""

    def __init__(self, connect: Callable[[], socket.socket]):
        self.connect = connect
        self._links: OrderedDict[tuple, DaemonLink] = OrderedDict()
        self._lock = threading.Lock()
        self.opened = 0  # connections made so far (tests and benches read it)

    def send(self, session: str | None, preamble: dict, name: str, arguments) -> tuple[dict, bool]:
        return self._link(session, preamble).send(name, arguments)

    def _link(self, session: str | None, preamble: dict) -> DaemonLink:
        key = (session, json.dumps(preamble, sort_keys=True))
        stale: list[DaemonLink] = []
        with self._lock:
            link = self._links.get(key)
            if link is not None and link.alive:
                self._links.move_to_end(key)
                return link
            now = time.monotonic()
            for k, other in list(self._links.items()):
                # the same session under an old identity, dead links, idle ones
                if (k[0] == session and session is not None) or not other.alive \
                        or now - other.last_used > IDLE_CLOSE_S:
                    stale.append(self._links.pop(k))
            while len(self._links) >= MAX_LINKS:
                stale.append(self._links.popitem(last=False)[1])
        for old in stale:
            old.close()
        link = DaemonLink(self.connect, preamble)  # outside the lock: it may start a daemon
        with self._lock:
            self.opened += 1
            self._links[key] = link
        return link

    def close_all(self) -> None:
        with self._lock:
            links, self._links = list(self._links.values()), OrderedDict()
        for link in links:
            link.close()
