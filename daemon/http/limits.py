"""Connection limits for `brain serve --http`: no idle or half-sent connection lives for long.

uvicorn closes a keep-alive connection that stays silent after a response,
but a connection that never finishes its headers, or stops halfway through
its body, would stay open for ever, and a few hundred of them exhaust the
process's file descriptors. This HTTP protocol (uvicorn's h11 one, watched)
closes:

- a connection whose request headers are not complete HEADER_TIMEOUT_S
  after it opened (or after its previous response);
- a connection whose request body stalls for BODY_IDLE_TIMEOUT_S;

and holds at most MAX_CONNECTIONS open: a newcomer past the cap closes the
oldest connection that has no request in progress (or is itself refused
when every connection is busy). A client that goes away mid-body costs one
log line, never a traceback. Its writes go out one send per loop turn
(one_send).
"""

from __future__ import annotations

import logging
import time

from .one_send import CoalescedWrites

log = logging.getLogger("brain.http")

HEADER_TIMEOUT_S = 10.0
BODY_IDLE_TIMEOUT_S = 30.0
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 200
CHECK_EVERY_S = 1.0


def guarded_protocol(header_timeout_s: float = HEADER_TIMEOUT_S, body_idle_timeout_s: float = BODY_IDLE_TIMEOUT_S,
                     max_connections: int = MAX_CONNECTIONS):
    """uvicorn's h11 protocol class with the timeouts and the cap above."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            # a response's headers and body leave in one send (see one_send)
            self.transport = CoalescedWrites(transport, self.loop)
            self.opened_at = self.waiting_since = self.last_data_at = time.monotonic()
            self.watch = self.loop.call_later(CHECK_EVERY_S, self.check)
            if len(self.connections) > max_connections:
                self.make_room()

        def data_received(self, data: bytes) -> None:
            self.last_data_at = time.monotonic()
            super().data_received(data)

        def on_response_complete(self) -> None:
            self.transport.flush()  # the whole answer is written: send it now, not at the next loop turn
            super().on_response_complete()
            self.waiting_since = time.monotonic()  # for the next request's headers

        def connection_lost(self, exc) -> None:
            self.watch.cancel()
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete and self.conn.their_state is h11.SEND_BODY:
                log.warning("client %s went away in the middle of a request body", _peer(self))
            super().connection_lost(exc)

        def idle(self) -> bool:
            """No request in progress: waiting for (the rest of) the next request's headers."""
            busy = self.cycle is not None and not self.cycle.response_complete
            return not busy and self.conn.their_state is h11.IDLE

        def close(self, why: str) -> None:
            log.info("closing the connection from %s: %s", _peer(self), why)
            self.transport.close()

        def check(self) -> None:
            if self.transport.is_closing():
                return
            now = time.monotonic()
            if self.idle() and now - self.waiting_since > header_timeout_s:
                return self.close(f"no complete request headers within {header_timeout_s:g} s")
            if self.conn.their_state is h11.SEND_BODY and now - self.last_data_at > body_idle_timeout_s:
                return self.close(f"the request body stalled for {body_idle_timeout_s:g} s")
            self.watch = self.loop.call_later(CHECK_EVERY_S, self.check)

        def make_room(self) -> None:
            idle = [c for c in self.connections
                    if c is not self and isinstance(c, GuardedH11Protocol) and c.idle()
                    and not c.transport.is_closing()]
            if idle:
                min(idle, key=lambda c: c.opened_at).close(f"over {max_connections} connections; oldest idle one")
            else:
                self.close(f"over {max_connections} connections, all busy")

    return GuardedH11Protocol


def _peer(protocol) -> str:
    client = getattr(protocol, "client", None)
    return f"{client[0]}:{client[1]}" if client else "a client"


class _DropClientDisconnect(logging.Filter):
    """The SDK logs a traceback when a body read fails because the client left; we log one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return type(exc).__name__ != "ClientDisconnect"


def uvicorn_settings() -> dict:
    """The uvicorn.Config keywords that go with the protocol above (and the one-line disconnect log)."""
    logging.getLogger("mcp.server.streamable_http").addFilter(_DropClientDisconnect())
    return {"http": guarded_protocol(), "timeout_keep_alive": KEEP_ALIVE_S,
            # uvicorn's own limit answers 503 to newcomers; the cap above prefers them over idle ones
            "limit_concurrency": None}
