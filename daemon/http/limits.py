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
oldest connection that has no request in progress, else the oldest
unauthenticated one (or is itself refused when every connection is busy
with an authenticated request). A client that goes away mid-body costs one
log line, never a traceback. Its writes go out one send per loop turn
(one_send).

Once a request's headers are in, the connection is classified by its
credential (`authenticated`, the same check /mcp makes). Requests without a
valid one — a 401 whose body still trickles in, an OAuth client registering —
share UNAUTHENTICATED_SLOTS: past that many in progress, the oldest of them is
closed. So slow bodies sent without a credential can hold a few connections,
never the slots authenticated calls need.
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
UNAUTHENTICATED_SLOTS = 16
CHECK_EVERY_S = 1.0


def bearer(headers) -> str | None:
    """The credential of `Authorization: Bearer <credential>` in ASGI headers, else None."""
    for name, value in headers:
        if name == b"authorization":
            text = value.decode("latin-1").strip()
            if text[:7].lower() != "bearer ":
                return None
            return text[7:].strip() or None
    return None


def guarded_protocol(header_timeout_s: float = HEADER_TIMEOUT_S, body_idle_timeout_s: float = BODY_IDLE_TIMEOUT_S,
                     max_connections: int = MAX_CONNECTIONS, authenticated=None,
                     unauthenticated_slots: int = UNAUTHENTICATED_SLOTS):
    """uvicorn's h11 protocol class with the timeouts and the caps above.

    `authenticated(credential) -> bool` says whether a bearer credential is
    valid; without it every request counts as authenticated.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            # a response's headers and body leave in one send (see one_send)
            self.transport = CoalescedWrites(transport, self.loop)
            self.opened_at = self.waiting_since = self.last_data_at = time.monotonic()
            self.classified, self.trusted = None, True
            self.watch = self.loop.call_later(CHECK_EVERY_S, self.check)
            if len(self.connections) > max_connections:
                self.make_room()

        def data_received(self, data: bytes) -> None:
            self.last_data_at = time.monotonic()
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            cycle = self.cycle
            if cycle is None or cycle is self.classified or authenticated is None:
                return
            # a new request's headers are complete: who sent it decides which slots it may hold
            self.classified, self.request_at = cycle, time.monotonic()
            self.trusted = bool(authenticated(bearer(cycle.scope.get("headers", ()))))
            if not self.trusted:
                held = self.untrusted_held()
                if len(held) > unauthenticated_slots:
                    min(held, key=lambda c: c.request_at).close(
                        f"over {unauthenticated_slots} unauthenticated requests in progress; oldest one")

        def untrusted_held(self) -> list:
            return [c for c in self.connections if isinstance(c, GuardedH11Protocol) and not c.trusted
                    and not c.idle() and not c.transport.is_closing()]

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
            untrusted = [c for c in self.untrusted_held() if c is not self]
            if idle:
                min(idle, key=lambda c: c.opened_at).close(f"over {max_connections} connections; oldest idle one")
            elif untrusted:
                min(untrusted, key=lambda c: c.request_at).close(
                    f"over {max_connections} connections; oldest unauthenticated one")
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


def uvicorn_settings(authenticated=None) -> dict:
    """The uvicorn.Config keywords that go with the protocol above (and the one-line disconnect log)."""
    logging.getLogger("mcp.server.streamable_http").addFilter(_DropClientDisconnect())
    return {"http": guarded_protocol(authenticated=authenticated), "timeout_keep_alive": KEEP_ALIVE_S,
            # uvicorn's own limit answers 503 to newcomers; the cap above prefers them over idle ones
            "limit_concurrency": None}
