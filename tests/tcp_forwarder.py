"""A loopback TCP forwarder to put in front of a real server: it counts the
connections a client opens, and can drop them (as a server closes an idle
keep-alive connection) or cut the next requests as they arrive (as a server
closes a connection at the moment the client sends on it). With `proxy=True`
it is a tiny HTTP proxy: it records each request line and passes the request
on in origin form; with `tls` (a server-side ssl.SSLContext) it is an https
front end to a plain server; with `rtt_s` it plays a network of that round
trip: a new connection's first bytes wait one round trip (the TCP handshake
a real network costs), every chunk half of one. Its own event loop runs in a
thread. Used by
tests/test_remote_keepalive.py and bench/bench_remote.py."""

from __future__ import annotations

import asyncio
import threading
import time
from urllib.parse import urlsplit


class Forwarder:
    def __init__(self, target_url: str, proxy: bool = False, tls=None, rtt_s: float = 0.0):
        parts = urlsplit(target_url)
        self.target = (parts.hostname, parts.port)
        self.proxy = proxy
        self.rtt_s = rtt_s
        self.accepted = 0
        self.cuts = 0  # connections cut as a request arrived on them
        self.request_lines: list[bytes] = []
        self._cuts_left, self._cut_fresh = 0, False
        self._open: set[tuple] = set()  # (client side, server side) writers
        self.closed = False
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.server = self._run(asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls))
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"{'https' if tls else parts.scheme}://127.0.0.1:{self.port}{parts.path}"

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    async def _serve(self, near_r, near_w) -> None:
        self.accepted += 1
        await asyncio.sleep(self.rtt_s)  # the handshake's round trip
        far_r, far_w = await asyncio.open_connection(*self.target)
        pair = (near_w, far_w)
        self._open.add(pair)
        answered = [False]  # the server has sent something back on this connection
        await asyncio.gather(self._pump(near_r, far_w, pair, answered, True),
                             self._pump(far_r, near_w, pair, answered, False))

    async def _pump(self, src, dst, pair, answered: list, from_client: bool) -> None:
        first = True
        try:
            while data := await src.read(1 << 16):
                if from_client:
                    if self._cuts_left > 0 and (self._cut_fresh or answered[0]):
                        self._cuts_left -= 1
                        self.cuts += 1
                        break  # the request never reaches the server
                    if self.proxy and first:
                        data = self._origin_form(data)
                else:
                    answered[0] = True
                first = False
                if self.rtt_s:  # delivered half a round trip later, in order
                    self.loop.call_later(self.rtt_s / 2, dst.write, data)
                else:
                    dst.write(data)
                    await dst.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        self.loop.call_later(self.rtt_s / 2, self._shut, pair)

    def _origin_form(self, data: bytes) -> bytes:
        line, sep, rest = data.partition(b"\r\n")
        self.request_lines.append(line)
        method, target, version = line.split(b" ", 2)
        if target.startswith(b"http://"):
            target = b"/" + target.split(b"/", 3)[3]
        return b" ".join((method, target, version)) + sep + rest

    def _shut(self, pair) -> None:
        self._open.discard(pair)
        for w in pair:
            w.close()

    def open_count(self, settle_s: float = 2.0) -> int:
        """Connections still open, once closes in flight have landed (up to settle_s)."""
        deadline = time.monotonic() + settle_s
        while self._open and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(self._open)

    def drop_all(self) -> None:
        """Close every connection, as a server closes idle keep-alive connections."""
        async def drop():
            for pair in list(self._open):
                self._shut(pair)
        self._run(drop())

    def cut(self, requests: int = 1, fresh_too: bool = False) -> None:
        """Close the connection the next `requests` requests arrive on, without passing them on:
        only connections that carried an answer before, unless `fresh_too`."""
        async def arm():
            self._cuts_left, self._cut_fresh = requests, fresh_too
        self._run(arm())

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        async def stop():
            self.server.close()
            for pair in list(self._open):
                self._shut(pair)
        self._run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
