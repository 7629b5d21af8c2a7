"""One send per turn of the event loop for an HTTP connection's writes.

uvicorn writes a response's status line and headers, then its body, as two
writes; on a socket with TCP_NODELAY each write is its own send and its
own wake-up of the client, which can do nothing with headers alone. On a
busy machine that second wake-up and send cost about as much as the rest
of the HTTP framing. `CoalescedWrites` stands in for the connection's
transport: what is written during one turn of the event loop leaves in one
send at the start of the next turn (a few microseconds later), and closing
sends what is queued first.
"""

from __future__ import annotations

import asyncio


class CoalescedWrites:
    """An asyncio transport whose writes within one loop turn are joined into one."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._queued: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._queued:
            self._loop.call_soon(self.flush)
        self._queued.append(data)

    def flush(self) -> None:
        if not self._queued:
            return
        data = b"".join(self._queued)
        self._queued.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str):
        # everything else (is_closing, get_extra_info, abort, pause_reading, …) is the transport's own
        return getattr(self._transport, name)
