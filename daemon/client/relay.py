"""`brain serve`: a byte relay between an MCP host's stdio and the daemon's socket.

The relay opens the daemon's socket (starting the daemon when none runs),
sends one preamble line naming the surface, the remote lane and the relay's
own client id (its delta cursors and idempotency keys), and then
copies newline-framed JSON-RPC both ways. All MCP work happens in the
daemon; this module imports nothing heavier than the standard library, so
an MCP host gets its `initialize` answered in tens of milliseconds.

It never forwards a local claim: whatever the host sends, its lane is
remote. It never exits while the host is connected: if the daemon goes
away mid-session, calls in flight get a JSON-RPC error asking to retry, and
the next message from the host starts a new daemon, replays the handshake
to it, and carries on; the relay says so on stderr. No line, however
malformed, deep or long, is parsed recursively here (see `wire_guard`).
stdin EOF or SIGTERM ends the relay.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from .call_keys import CallKeys
from .calls import json_line
from ..protocol.surfaces import SURFACE_ORDER
from ..protocol.wire_guard import problem, top_level

FORCE_ENV = "BRAIN_MCP_FORCE_SURFACE"
CHUNK = 1024 * 1024
# ids the relay uses for its own replayed handshake; their answers are swallowed
RELAY_ID_PREFIX = "brain-relay-"
# how long one message may wait for a daemon to come back before it is answered with an error
RECONNECT_WINDOW_S = 30.0


class SurfaceError(ValueError):
    pass


def resolve_surface(flag: str | None, cfg: dict, environ=None) -> tuple[str, str | None]:
    """The surface to serve: flag > config `mcp_surface` > full, narrowed by the force env.

    Returns (surface, warning). An unknown flag or config value is an error;
    an unknown force-env value is ignored with a warning (it may only narrow).
    """
    env = os.environ if environ is None else environ
    if flag is not None:
        if flag not in SURFACE_ORDER:
            raise SurfaceError(f"unknown surface {flag!r}; use one of: {', '.join(SURFACE_ORDER)}")
        surface = flag
    else:
        surface = cfg.get("mcp_surface") or "full"
        if surface not in SURFACE_ORDER:
            raise SurfaceError(
                f"config mcp_surface is {surface!r}, which is not a surface; "
                f"fix it with `brain config set mcp_surface full` (or verbs, starter)")
    warning = None
    forced = env.get(FORCE_ENV)
    if forced:
        if forced in SURFACE_ORDER:
            surface = min(surface, forced, key=SURFACE_ORDER.index)
        else:
            warning = (f"{FORCE_ENV}={forced!r} is not a surface ({', '.join(SURFACE_ORDER)}); ignored")
    return surface, warning


def preamble(surface: str, client_id: str | None = None) -> bytes:
    # lane is always remote: an MCP host is never the trusted local lane
    pre = {"surface": surface, "lane": "remote", "client": "brain-serve", "transport": "stdio"}
    if client_id:
        pre["client_id"] = client_id
    return json_line(pre)


def _say(msg: str) -> None:
    try:
        sys.stderr.write(f"brain serve: {msg}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _fields(line: bytes) -> dict:
    # the raw-byte scanner: no recursion, so no line can crash the relay
    return top_level(line[:65536], ("id", "method"))


def _request_id(line: bytes):
    """(is_request, id) for a client line, cheaply; (False, None) when unsure."""
    f = _fields(line)
    if "method" in f and "id" in f:
        return True, f["id"]
    return False, None


def _response_id(line: bytes):
    f = _fields(line)
    return None if "method" in f else f.get("id")


def _retry_error(rid, why: str) -> bytes:
    return json_line({"jsonrpc": "2.0", "id": rid, "error": {
        "code": -32603, "message": f"{why}; retry this call", "data": {"retry": True}}})


class Relay:
    """Copies lines between (stdin, stdout) and the daemon's socket.

    It outlives the daemon: a connection that breaks is opened again (the
    daemon restarts on connect), the MCP handshake the host already made is
    replayed to the new daemon, and only the calls in flight at that moment
    are answered with an error asking to retry.
    """

    def __init__(self, connect, surface: str, stdin=None, stdout=None, reconnect_window_s: float = RECONNECT_WINDOW_S):
        self.connect = connect            # () -> (socket, restarted: bool)
        self.surface = surface
        self.stdin = stdin or sys.stdin.buffer
        self.stdout = stdout or sys.stdout.buffer
        self.out_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.generation = 0               # bumped per daemon connection
        self.pending: dict = {}           # id -> generation it was sent on, until answered
        self.init_line: bytes | None = None
        self.initialized_line: bytes | None = None
        self.stdin_closed = False
        self.replays = 0
        self.reconnect_window_s = reconnect_window_s
        self._reader: threading.Thread | None = None
        # a retried remember runs once (see call_keys)
        self.keys = CallKeys()
        # this host's own delta cursors and keys, the same on every daemon it meets
        # (docs/protocol.md §3.7): no other agent's relay can evict them
        self.client_id = f"serve-{secrets.token_hex(8)}"

    # -- daemon side -------------------------------------------------------

    def _open(self, replay: bool) -> tuple[socket.socket, int]:
        sock, _ = self.connect()
        opening = [preamble(self.surface, self.client_id)]
        if replay and self.init_line is not None:
            self.replays += 1
            msg = json.loads(self.init_line)
            msg["id"] = f"{RELAY_ID_PREFIX}{self.replays}"
            opening.append(json_line(msg))
            if self.initialized_line is not None:
                opening.append(self.initialized_line)
        try:
            sock.sendall(b"".join(opening))
        except OSError:
            sock.close()
            raise
        with self.state_lock:
            self.generation += 1
            gen = self.generation
            self.sock = sock
        self._reader = threading.Thread(target=self._pump_from_daemon, args=(sock, gen), daemon=True)
        self._reader.start()
        return sock, gen

    def _write_out(self, data: bytes) -> None:
        with self.out_lock:
            try:
                self.stdout.write(data)
                self.stdout.flush()
            except (OSError, ValueError):
                # the host went away: nothing left to serve
                os._exit(0)

    def _drop(self, sock: socket.socket) -> None:
        with self.state_lock:
            if self.sock is sock:
                self.sock = None

    def _pump_from_daemon(self, sock: socket.socket, gen: int) -> None:
        buf = bytearray()
        while True:
            try:
                chunk = sock.recv(CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            end = buf.rfind(b"\n")
            if end < 0:
                continue
            block = bytes(buf[: end + 1])
            del buf[: end + 1]
            out = []
            for line in block.splitlines(keepends=True):
                rid = _response_id(line)
                if isinstance(rid, str) and rid.startswith(RELAY_ID_PREFIX):
                    continue  # the answer to our replayed initialize
                if rid is not None:
                    with self.state_lock:
                        self.pending.pop(rid, None)
                    self.keys.answered(rid)
                out.append(line)
            if out:
                self._write_out(b"".join(out))
        # the daemon closed the connection: only this connection's calls are lost
        self._drop(sock)
        with self.state_lock:
            lost = [rid for rid, g in self.pending.items() if g == gen]
            for rid in lost:
                del self.pending[rid]
            closing = self.stdin_closed
        try:
            sock.close()
        except OSError:
            pass
        if closing:
            return
        _say("the daemon stopped; the next message starts a new one.")
        for rid in lost:
            self.keys.unanswered(rid)  # it may have run: its retry carries the same key
            self._write_out(_retry_error(rid, "the brain daemon stopped while answering this call "
                                              "(it restarts by itself)"))

    # -- host side ---------------------------------------------------------

    def _connection(self) -> tuple[socket.socket, int]:
        """The live daemon connection, opening one (and replaying the handshake) when needed."""
        with self.state_lock:
            if self.sock is not None:
                return self.sock, self.generation
        restarted = self.init_line is not None
        sock, gen = self._open(replay=restarted)
        if restarted:
            _say("reconnected to a new daemon.")
        return sock, gen

    def _send(self, data: bytes, rid=None) -> bool:
        """Send one line (or part of one) to the daemon, reconnecting for up to the window.

        False when no daemon could be reached in time; the caller answers.
        """
        deadline = time.monotonic() + self.reconnect_window_s
        delay = 0.05
        last: Exception | None = None
        while True:
            try:
                sock, gen = self._connection()
                if rid is not None:
                    with self.state_lock:
                        self.pending[rid] = gen
                sock.sendall(data)
                return True
            except (OSError, RuntimeError, ValueError) as e:  # RuntimeError: the daemon failed to start
                last = e
                held = self.sock
                if held is not None:
                    self._drop(held)
            if time.monotonic() >= deadline:
                _say(f"cannot reach the daemon: {str(last).splitlines()[0] if str(last) else last!r}")
                return False
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def run(self) -> int:
        try:
            self._connection()
        except (OSError, RuntimeError) as e:
            # the first message tries again; the host still gets answers
            _say(f"cannot reach the daemon yet: {str(e).splitlines()[0] if str(e) else e!r}")
        partial = False
        skipping = False                 # the rest of a line whose start could not be sent
        while True:
            line = self.stdin.readline(CHUNK)
            if not line:
                break
            rid = None
            if not partial:
                skipping = False
                is_req, rid = _request_id(line)
                if is_req:
                    self._note_handshake(line)
                    if rid is None:
                        is_req = False
                    else:
                        line = self._keyed(line)
                elif self.initialized_line is None and b'"notifications/initialized"' in line[:4096]:
                    self.initialized_line = line if line.endswith(b"\n") else line + b"\n"
            elif skipping:
                partial = not line.endswith(b"\n")
                continue
            first_part = not partial
            partial = not line.endswith(b"\n")
            if not self._send(line, rid if first_part else None):
                with self.state_lock:
                    self.pending.pop(rid, None)
                skipping = partial
                if first_part and rid is not None:
                    self.keys.unanswered(rid)
                    self._write_out(_retry_error(rid, "the brain daemon could not be reached or started"))
        self.stdin_closed = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            if self._reader is not None:
                self._reader.join(timeout=2.0)
        return 0

    def _keyed(self, line: bytes) -> bytes:
        """A whole `remember` line with its idempotency key added; any other line as it came."""
        if not line.endswith(b"\n") or b'"remember"' not in line or b'"tools/call"' not in line:
            return line
        if len(line) > 65536 or problem(line) is not None:
            return line  # the daemon answers what is wrong with it
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return line
        return json_line(msg) if self.keys.stamp(msg) else line

    def _note_handshake(self, line: bytes) -> None:
        """Keep the host's initialize, to replay it to a daemon that replaced the first one."""
        if self.init_line is not None or len(line) > 65536 or b'"initialize"' not in line[:4096]:
            return
        if problem(line) is not None:
            return
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            self.init_line = line if line.endswith(b"\n") else line + b"\n"


def run_relay(places, vault: Path, cfg: dict, surface: str) -> int:
    """Entry point of `brain serve`: relay until stdin closes or SIGTERM."""
    from .spawn import connect_or_start

    def on_term(signum, frame):
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    def connect():
        return connect_or_start(places, vault, on_start=lambda: _say("starting the brain daemon…"))

    relay = Relay(connect, surface)
    try:
        return relay.run()
    except KeyboardInterrupt:
        return 0
