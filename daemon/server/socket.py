"""MCP on the daemon's Unix socket: one preamble line, then JSON-RPC lines.

A client opens the socket and sends one JSON line

    {"surface": "verbs|starter|full", "lane": "local|remote", "client": "<name>",
     "client_id": "<id>", "vault": {"dev": <int>, "ino": <int>}}

and then speaks MCP (newline-delimited JSON-RPC) on the same connection. The
local lane is trusted (private facts visible) and is granted only when the
peer's uid, read from the kernel (SO_PEERCRED), is ours; any other claim
becomes the remote lane. `client_id` gives the client its own delta
cursors and idempotency keys; without one it shares `remote` with every
other client that has none. A client that skips the preamble and opens with a
JSON-RPC message is served as remote on the default surface. A preamble
that names a vault folder (`vault`: device and inode of its real path) gets
one line back before anything else: `{"brain_daemon": {vault, dev, ino, pid,
version}}` when it is the folder we serve, else a JSON-RPC error, and the
connection ends.

Faults stay per connection: a line that is not UTF-8, not JSON, nested
too deep or not JSON-RPC gets one JSON-RPC error carrying its id wherever
the id can be read (see `wire_guard`); a line over MAX_LINE_BYTES is
discarded and answered the same way; a client that goes away mid-call only
loses its own answer.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
from collections import OrderedDict

import anyio
import mcp_types as types
from anyio.abc import SocketAttribute
from mcp.shared.message import SessionMessage

from .mcp import CALL_THREADS, SLOW_CALL_THREADS, CallGate, build_server, engine_dispatcher, fixed_caller, vault_lost_envelope
from ..protocol.caller import Caller
from ..verbs.cursors import connection_namespace
from ..rendezvous import IDENTITY_KEY
from ..protocol.surfaces import SURFACE_ORDER as SURFACES
from ..protocol.wire_guard import (
    INVALID_REQUEST, PARSE_ERROR, bad_id, describe_invalid, error_line, problem, request_id,
)

log = logging.getLogger("brain.socket")

# a put_page of a large note fits easily; anything bigger is not a request
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_PREAMBLE_BYTES = 4096
# a connection that never says who it is is dropped after this long
PREAMBLE_TIMEOUT_S = 30.0
READ_CHUNK = 256 * 1024
# after a client half-closes, how long its unanswered requests may still run
HALF_CLOSE_GRACE_S = 600.0
# SDK Servers kept for reuse, one per recent caller
MAX_CACHED_SERVERS = 64


def peer_uid(stream) -> int | None:
    """The uid of the process at the other end of a Unix socket, per the kernel."""
    try:
        raw: socket.socket = stream.extra(SocketAttribute.raw_socket)
        creds = raw.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid
    except (OSError, AttributeError, anyio.TypedAttributeLookupError):
        return None


def caller_from_preamble(pre: dict, uid: int | None, default_surface: str) -> Caller:
    """Decide who the peer is. Trust needs both the claim and a same-uid peer."""
    surface = pre.get("surface") or default_surface
    if surface not in SURFACES:
        raise ValueError(f"unknown surface {surface!r}; use one of {', '.join(SURFACES)}")
    transport = str(pre["transport"]) if pre.get("transport") in ("stdio", "http") else "socket"
    claimed = pre.get("client_id")
    claimed = claimed.strip() if isinstance(claimed, str) else ""
    if pre.get("lane") == "local" and uid is not None and uid == os.getuid():
        return Caller(remote=False, client_id=f"local:{claimed}" if claimed else "local",
                      transport=transport, surface=surface)
    # the client id names the caller's delta cursors and idempotency keys
    # (docs/protocol.md §3.7): the HTTP front end forwards its token's name,
    # any other client its own id, kept apart from token names by the
    # transport; a claim can only narrow (read_only), never grant trust
    connection = None
    if not claimed or claimed == "local":
        client_id = "remote"
        # its delta cursors in a namespace of this connection's own, so no other id-less client can
        # evict them (its idempotency keys stay "remote": a retry comes on a new connection)
        connection = connection_namespace(transport)
    elif transport == "http":
        client_id = claimed
    else:
        client_id = f"{transport}:{claimed}"
    return Caller(remote=True, client_id=client_id, transport=transport, surface=surface,
                  can_write=pre.get("read_only") is not True, connection=connection)


class SocketServer:
    """Accepts connections and serves each with its own MCP session."""

    def __init__(self, engine, *, gate: CallGate, default_surface: str = "full", ready=None,
                 identity: dict | None = None):
        self.call = engine_dispatcher(engine, gate=gate, ready=ready)
        self.engine = engine
        # which vault folder we serve, for preambles that name one (vault_reply)
        self.identity = identity
        self.gate = gate
        self.default_surface = default_surface
        self.limiter: anyio.CapacityLimiter | None = None
        self.slow_limiter: anyio.CapacityLimiter | None = None
        # the most recently used callers' SDK Servers (see server_for)
        self._servers: OrderedDict[Caller, object] = OrderedDict()
        # each open connection's requests not yet answered (see unanswered())
        self._unanswered: list[set] = []

    def server_for(self, caller: Caller):
        # one SDK Server per distinct caller: the Server itself is stateless
        # across connections, so sessions with the same caller share it
        # across connections, so sessions with the same caller share it; each
        # relay has its own client id, so only the recent ones are kept (a
        # session holds its own reference)
        srv = self._servers.get(caller)
        if srv is None:
            srv = build_server(self.call, fixed_caller(caller), limiter=self.limiter,
                               slow_limiter=self.slow_limiter)
            self._servers[caller] = srv
            while len(self._servers) > MAX_CACHED_SERVERS:
                self._servers.popitem(last=False)
        self._servers.move_to_end(caller)
        return srv

    def vault_reply(self, claim) -> tuple[bytes, bool]:
        """The answer to a preamble naming the vault folder its client means.

        The same folder (device and inode) gets our identity on one line and
        the session goes on; another folder gets an error and nothing else,
        so a call already sent behind the preamble never runs on the wrong
        vault (docs/architecture.md, "The vault folder").
        """
        ident = self.identity or {}
        same = isinstance(claim, dict) and bool(ident) and \
            (claim.get("dev"), claim.get("ino")) == (ident.get("dev"), ident.get("ino"))
        if same:
            return (json.dumps({IDENTITY_KEY: ident}) + "\n").encode(), True
        # the folder at our path may have been replaced: if so we stop, and the client starts a fresh daemon
        vault_lost_envelope(self.engine)
        msg = (f"this daemon serves the vault folder {ident.get('vault')}, not the folder this client names; "
               "fix: run the command again (a daemon for that folder starts by itself)")
        line = {"jsonrpc": "2.0", "id": None,
                "error": {"code": INVALID_REQUEST, "message": msg, "data": {IDENTITY_KEY: ident}}}
        return (json.dumps(line) + "\n").encode(), False

    def unanswered(self) -> int:
        """Requests received on any connection whose answer is not yet written.

        A stopping daemon waits for this to reach zero after the calls drain:
        a call that finished has not necessarily had its answer sent.
        """
        return sum(len(s) for s in self._unanswered)

    async def serve(self, listener, task_group) -> None:
        """Accept until cancelled; connections live in `task_group`, so they
        outlive the accept loop (a stopping daemon stops accepting first)."""
        self.limiter = anyio.CapacityLimiter(CALL_THREADS)
        self.slow_limiter = anyio.CapacityLimiter(SLOW_CALL_THREADS)
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                except OSError as e:  # e.g. out of file descriptors: keep serving the others
                    log.warning("accept failed: %s", e)
                    await anyio.sleep(0.1)
                    continue
                task_group.start_soon(self.handle, stream)

    async def handle(self, stream) -> None:
        try:
            await self._session(stream)
        except Exception:
            log.exception("connection failed")
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await stream.aclose()
                except Exception:
                    pass

    async def _session(self, stream) -> None:
        write_lock = anyio.Lock()
        peer_gone = False

        async def send_bytes(data: bytes) -> None:
            nonlocal peer_gone
            if peer_gone:
                return
            async with write_lock:
                try:
                    await stream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    peer_gone = True

        lines = _LineReader(stream)
        first = None
        with anyio.move_on_after(PREAMBLE_TIMEOUT_S):
            first = await lines.next_line(MAX_PREAMBLE_BYTES)
        if first is None:
            return
        if first is _LineReader.TOO_LONG:
            await send_bytes(error_line(INVALID_REQUEST, "the first line (the preamble) is too long"))
            return
        pending_first: bytes | None = None
        try:
            # a line the guard refuses is a message (answered with an error), never a preamble
            pre = json.loads(first) if problem(first) is None else {"jsonrpc": None}
        except ValueError:
            await send_bytes(error_line(PARSE_ERROR, "the first line must be a JSON preamble or a JSON-RPC message"))
            return
        if not isinstance(pre, dict):
            await send_bytes(error_line(INVALID_REQUEST, "the preamble must be a JSON object"))
            return
        if "jsonrpc" in pre:
            # no preamble: a plain MCP client; its first line is a message
            pending_first, pre = first, {}
        if "vault" in pre:
            reply, same = self.vault_reply(pre["vault"])
            await send_bytes(reply)
            if not same:
                return
        try:
            caller = caller_from_preamble(pre, peer_uid(stream), self.default_surface)
        except ValueError as e:
            await send_bytes(error_line(INVALID_REQUEST, str(e)))
            return
        log.debug("connection: client=%s lane=%s surface=%s", pre.get("client"),
                  "remote" if caller.remote else "local", caller.surface)
        server = self.server_for(caller)

        to_server_send, to_server_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        from_server_send, from_server_recv = anyio.create_memory_object_stream[SessionMessage](16)
        # requests not yet answered: a client that half-closes after its last
        # request still gets the answers (end of input would cancel them)
        unanswered: set = set()
        self._unanswered.append(unanswered)

        async def deliver(line: bytes) -> None:
            line = line.strip()
            if not line:
                return
            # one bad line costs its sender one error answer, with its id where readable
            bad = problem(line)
            if bad is None:
                try:
                    msg = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception:
                    bad = describe_invalid(line)
            if bad is not None:
                await send_bytes(error_line(*bad, request_id(line)))
                return
            if isinstance(msg, types.JSONRPCNotification):
                # the SDK reads a request whose id is null, 1.5 or an object as a notification
                bad = bad_id(line)
                if bad is not None:
                    await send_bytes(error_line(*bad, None))
                    return
            if isinstance(msg, types.JSONRPCRequest):
                unanswered.add(msg.id)
            elif isinstance(msg, types.JSONRPCNotification) and msg.method == "notifications/cancelled":
                # a cancelled request may never be answered: do not wait for it
                unanswered.discard((msg.params or {}).get("requestId"))
            await to_server_send.send(SessionMessage(msg))

        async def read_loop() -> None:
            async with to_server_send:
                if pending_first is not None:
                    await deliver(pending_first)
                while True:
                    line = await lines.next_line(MAX_LINE_BYTES)
                    if line is None:
                        if unanswered and not peer_gone:
                            with anyio.move_on_after(HALF_CLOSE_GRACE_S):
                                while unanswered and not peer_gone:
                                    await anyio.sleep(0.02)
                        return
                    if line is _LineReader.TOO_LONG:
                        await send_bytes(error_line(
                            INVALID_REQUEST, f"Invalid Request: message longer than {MAX_LINE_BYTES} bytes; dropped",
                            request_id(lines.overlong_head)))
                        continue
                    await deliver(line)

        async def write_loop() -> None:
            async with from_server_recv:
                async for sm in from_server_recv:
                    rid = getattr(sm.message, "id", None)
                    data = sm.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    # after the peer left, keep draining so no handler blocks on us
                    await send_bytes(data.encode())
                    # only once written: a stopping daemon waits for this
                    if rid is not None and not isinstance(sm.message, types.JSONRPCRequest):
                        unanswered.discard(rid)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(write_loop)
                tg.start_soon(read_loop)
                # returns at end of input; write_loop then drains the last answers
                await server.run(to_server_recv, from_server_send, server.create_initialization_options())
        finally:
            self._unanswered.remove(unanswered)


class _LineReader:
    """Newline-framed reads with a length cap; an overlong line is skipped, not buffered."""

    TOO_LONG = object()

    # how much of a skipped line is kept, to read its id from
    HEAD_BYTES = 4096

    def __init__(self, stream):
        self.stream = stream
        self.buf = bytearray()
        self.eof = False
        self.overlong_head = b""

    async def _fill(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = await self.stream.receive(READ_CHUNK)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.eof = True
            return False
        self.buf += chunk
        return True

    async def next_line(self, limit: int):
        """The next line (without its newline), TOO_LONG, or None at end of stream.

        A partial line left at end of stream is a half-written request: dropped.
        """
        scanned = 0
        while True:
            idx = self.buf.find(b"\n", scanned)
            if idx >= 0:
                if idx > limit:
                    self.overlong_head = bytes(self.buf[: self.HEAD_BYTES])
                    del self.buf[: idx + 1]
                    return self.TOO_LONG
                line = bytes(self.buf[:idx])
                del self.buf[: idx + 1]
                return line
            scanned = len(self.buf)
            if scanned > limit:
                return await self._skip_rest()
            if not await self._fill():
                return None

    async def _skip_rest(self):
        # discard through the next newline, keeping only the head
        self.overlong_head = bytes(self.buf[: self.HEAD_BYTES])
        while True:
            idx = self.buf.find(b"\n")
            if idx >= 0:
                del self.buf[: idx + 1]
                return self.TOO_LONG
            self.buf.clear()
            if not await self._fill():
                return None
