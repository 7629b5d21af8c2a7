"""One long-lived daemon connection per HTTP session (docs/protocol.md §1.4 runs in the daemon).

`brain serve --http` forwards every tools/call to the daemon's Unix socket.
Opening a socket and replaying the MCP handshake for each call cost more
than the call itself, so each HTTP session keeps one connection: the
preamble (surface, client id, read-only claim) and the handshake are sent
once, then calls are multiplexed on it by JSON-RPC id.

Links live on the HTTP server's event loop: a call writes one line and
awaits its answer, which the link's reader task hands over by id. No
thread carries a call (a hop to a worker thread and back cost more than
the HTTP framing around it); only opening a link runs in a worker thread,
because it may have to start a daemon.

A link whose identity changes (a client rescoped, or its write scope
revoked) is retired, never reused: the calls already sent on it finish
there, the next call opens a new link, and the old one closes once its
last call is answered. A link whose daemon went away fails the calls in
flight with `DaemonCallError`; the next call opens a fresh one (starting a
daemon when none runs). Idle links are closed after `IDLE_CLOSE_S`, and at
most `MAX_LINKS` stay open (least recently used go first).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import socket
import time
from collections import OrderedDict
from typing import Callable

from ..client.calls import DaemonCallError, answer_body, json_line
from ..protocol.version import MCP_PROTOCOL_VERSION

log = logging.getLogger("brain.http.link")

IDLE_CLOSE_S = 30 * 60.0
MAX_LINKS = 256
# a call never waits longer than this for its answer (synthesize is the slowest)
CALL_TIMEOUT_S = 15 * 60.0
# one answer line may be this long (a context_pack answer is bounded by its budget, far below)
MAX_LINE = 64 << 20


class DaemonLink:
    """A multiplexed MCP connection to the daemon for one caller identity; make it with `open`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, preamble: dict):
        self.preamble = preamble
        self.last_used = time.monotonic()
        self.alive = True
        self.retired = False
        self._ids = itertools.count(2)
        self._pending: dict[int, asyncio.Future] = {}
        self._reader, self._writer = reader, writer
        self._read_task: asyncio.Task | None = None

    @classmethod
    async def open(cls, connect: Callable[[], socket.socket], preamble: dict) -> "DaemonLink":
        import anyio

        sock = await anyio.to_thread.run_sync(connect)
        try:
            reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE)
        except BaseException:
            sock.close()
            raise
        link = cls(reader, writer, preamble)
        writer.write(b"".join(json_line(m) for m in (
            preamble,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": MCP_PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": preamble.get("client", "brain-http"), "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        )))
        link._read_task = asyncio.get_running_loop().create_task(link._read_loop(), name="brain-daemon-link")
        return link

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    async def send(self, name: str, arguments, meta: dict | None = None) -> tuple[dict, bool]:
        """One tools/call (with the client's `_meta`, when it carried one we keep);
        raises DaemonCallError when the daemon does not answer."""
        if not self.alive:
            raise DaemonCallError("the connection to the daemon is closed")
        rid = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._pending[rid] = answer
        self.last_used = time.monotonic()
        try:
            params = {"name": name, "arguments": arguments}
            if meta:
                params["_meta"] = meta
            self._writer.write(json_line({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}))
            async with asyncio.timeout(CALL_TIMEOUT_S):
                msg = await answer
        finally:
            self._pending.pop(rid, None)
            self.last_used = time.monotonic()
            if self.retired and not self._pending:
                self.close()
        return answer_body(msg)

    async def _read_loop(self) -> None:
        why = "the daemon closed the connection before answering"
        try:
            while True:
                line = await self._reader.readuntil(b"\n")
                if line.strip():
                    self._deliver(json.loads(line))
        except asyncio.IncompleteReadError:
            pass
        except (OSError, ValueError, asyncio.LimitOverrunError) as e:
            log.debug("daemon link read failed: %s", e)
            why = f"the daemon connection broke: {e}"
        self._fail(why)

    def _deliver(self, msg: dict) -> None:
        rid = msg.get("id")
        if rid is None and "error" in msg:  # the preamble was refused: nothing on this link can succeed
            self._fail(f"the daemon refused the connection: {(msg['error'] or {}).get('message')}")
            return
        answer = self._pending.get(rid) if isinstance(rid, int) else None
        if answer is not None:
            if not answer.done():  # (a call that timed out or whose client left is already done)
                answer.set_result(msg)
        elif rid == 1 and "error" in msg:
            self._fail(f"the daemon refused the handshake: {(msg['error'] or {}).get('message')}")

    def _fail(self, why: str) -> None:
        self.alive = False
        pending, self._pending = self._pending, {}
        for answer in pending.values():
            if not answer.done():
                answer.set_exception(DaemonCallError(why))
        self.close()

    def retire(self) -> None:
        """Take no new calls; close once the calls in flight are answered."""
        self.retired = True
        self.alive = False
        if not self._pending:
            self.close()

    def close(self) -> None:
        self.alive = False
        if not self._writer.is_closing():
            self._writer.close()  # the reader task then sees the end of the stream and stops


class DaemonLinks:
    """The open links, keyed by (HTTP session, caller identity); used from one event loop."""

    def __init__(self, connect: Callable[[], socket.socket]):
        self.connect = connect
        self._links: OrderedDict[tuple, DaemonLink] = OrderedDict()
        self._opening: asyncio.Lock | None = None  # made on first use, on the server's loop
        self.opened = 0  # connections made so far (tests and benches read it)

    async def send(self, session: str | None, preamble: dict, name: str, arguments,
                   meta: dict | None = None) -> tuple[dict, bool]:
        return await (await self._link(session, preamble)).send(name, arguments, meta)

    async def _link(self, session: str | None, preamble: dict) -> DaemonLink:
        key = (session, json.dumps(preamble, sort_keys=True))
        link = self._live(key)
        if link is not None:
            return link
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # one opener at a time: two calls of a new session share one link
            link = self._live(key)
            if link is not None:
                return link
            self._drop_stale(session)
            link = await DaemonLink.open(self.connect, preamble)
            self.opened += 1
            self._links[key] = link
            return link

    def _live(self, key: tuple) -> DaemonLink | None:
        link = self._links.get(key)
        if link is None or not link.alive:
            return None
        self._links.move_to_end(key)
        return link

    def _drop_stale(self, session: str | None) -> None:
        """Retire the session's links under an old identity; close dead and idle ones; keep the cap."""
        now = time.monotonic()
        for k, other in list(self._links.items()):
            if (k[0] == session and session is not None) or not other.alive or now - other.last_used > IDLE_CLOSE_S:
                self._links.pop(k).retire()
        while len(self._links) >= MAX_LINKS:
            self._links.popitem(last=False)[1].retire()

    def close_all(self) -> None:
        links, self._links = list(self._links.values()), OrderedDict()
        for link in links:
            link.close()
