"""`brain serve`: a byte relay between an MCP host's stdio and the daemon's socket.

The relay opens the daemon's socket (starting the daemon when none runs),
sends one preamble line naming the surface and the remote lane, and then
copies newline-framed JSON-RPC both ways. All MCP work happens in the
daemon; this module imports nothing heavier than the standard library, so
an MCP host gets its `initialize` answered in tens of milliseconds.

It never forwards a local claim: whatever the host sends, its lane is
remote. If the daemon goes away mid-session, calls in flight get a
JSON-RPC error, and the next message from the host starts a new daemon,
replays the handshake to it, and carries on; the relay says so on stderr.
stdin EOF or SIGTERM ends the relay.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import threading
from pathlib import Path

from .client import json_line

SURFACE_ORDER = ("verbs", "starter", "full")
FORCE_ENV = "BRAIN_MCP_FORCE_SURFACE"
CHUNK = 1024 * 1024
# ids the relay uses for its own replayed handshake; their answers are swallowed
RELAY_ID_PREFIX = "brain-relay-"
_ID_RE = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


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


def preamble(surface: str) -> bytes:
    # lane is always remote: an MCP host is never the trusted local lane
    return json_line({"surface": surface, "lane": "remote", "client": "brain-serve", "transport": "stdio"})


def _say(msg: str) -> None:
    try:
        sys.stderr.write(f"brain serve: {msg}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _request_id(line: bytes):
    """(is_request, id) for a client line, cheaply; (False, None) when unsure."""
    if len(line) > 65536:
        m = _ID_RE.match(line[:4096])
        return (m is not None, json.loads(m.group(1)) if m else None)
    try:
        msg = json.loads(line)
    except ValueError:
        return False, None
    if isinstance(msg, dict) and "method" in msg and "id" in msg:
        return True, msg["id"]
    return False, None


def _response_id(line: bytes):
    m = _ID_RE.match(line[:4096])
    if m:
        try:
            return json.loads(m.group(1))
        except ValueError:
            return None
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg.get("id") if isinstance(msg, dict) and ("result" in msg or "error" in msg) else None


class Relay:
    """Copies lines between (stdin, stdout) and the daemon's socket."""

    def __init__(self, connect, surface: str, stdin=None, stdout=None):
        self.connect = connect            # () -> (socket, restarted: bool)
        self.surface = surface
        self.stdin = stdin or sys.stdin.buffer
        self.stdout = stdout or sys.stdout.buffer
        self.out_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.pending: dict = {}           # id -> True, for requests not yet answered
        self.init_line: bytes | None = None
        self.initialized_line: bytes | None = None
        self.stdin_closed = False
        self.replays = 0
        self._reader: threading.Thread | None = None

    # -- daemon side -------------------------------------------------------

    def _open(self, replay: bool) -> None:
        sock, _ = self.connect()
        opening = [preamble(self.surface)]
        if replay and self.init_line is not None:
            self.replays += 1
            msg = json.loads(self.init_line)
            msg["id"] = f"{RELAY_ID_PREFIX}{self.replays}"
            opening.append(json_line(msg))
            if self.initialized_line is not None:
                opening.append(self.initialized_line)
        sock.sendall(b"".join(opening))
        self.sock = sock
        self._reader = threading.Thread(target=self._pump_from_daemon, args=(sock,), daemon=True)
        self._reader.start()

    def _write_out(self, data: bytes) -> None:
        with self.out_lock:
            try:
                self.stdout.write(data)
                self.stdout.flush()
            except (OSError, ValueError):
                # the host went away: nothing left to serve
                os._exit(0)

    def _pump_from_daemon(self, sock: socket.socket) -> None:
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
                out.append(line)
            if out:
                self._write_out(b"".join(out))
        # the daemon closed the connection
        with self.state_lock:
            if self.sock is sock:
                self.sock = None
            lost = list(self.pending)
            self.pending.clear()
            closing = self.stdin_closed
        try:
            sock.close()
        except OSError:
            pass
        if closing:
            return
        _say("the daemon stopped; the next message starts a new one.")
        for rid in lost:
            err = {"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32603, "message": "the brain daemon stopped while answering this call; "
                "it restarts on the next call — retry it"}}
            self._write_out(json_line(err))

    # -- host side ---------------------------------------------------------

    def _send(self, data: bytes) -> None:
        for attempt in (1, 2):
            sock = self.sock
            if sock is None:
                restarted = self.init_line is not None
                self._open(replay=restarted)
                if restarted:
                    _say("reconnected to a new daemon.")
                sock = self.sock
            try:
                sock.sendall(data)
                return
            except OSError:
                with self.state_lock:
                    if self.sock is sock:
                        self.sock = None
                if attempt == 2:
                    raise

    def run(self) -> int:
        self._open(replay=False)
        partial = False
        while True:
            line = self.stdin.readline(CHUNK)
            if not line:
                break
            if not partial:
                is_req, rid = _request_id(line)
                if is_req:
                    with self.state_lock:
                        self.pending[rid] = True
                    if self.init_line is None and b'"initialize"' in line[:4096]:
                        try:
                            if json.loads(line).get("method") == "initialize":
                                self.init_line = line if line.endswith(b"\n") else line + b"\n"
                        except ValueError:
                            pass
                elif self.initialized_line is None and b'"notifications/initialized"' in line[:4096]:
                    self.initialized_line = line if line.endswith(b"\n") else line + b"\n"
            partial = not line.endswith(b"\n")
            try:
                self._send(line)
            except OSError as e:
                _say(f"cannot reach the daemon: {e}")
                return 1
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


def run_relay(places, vault: Path, cfg: dict, surface: str) -> int:
    """Entry point of `brain serve`: relay until stdin closes or SIGTERM."""
    from .spawn import DaemonStartError, connect_or_start

    def on_term(signum, frame):
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    def connect():
        return connect_or_start(places, vault, on_start=lambda: _say("starting the brain daemon…"))

    relay = Relay(connect, surface)
    try:
        return relay.run()
    except DaemonStartError as e:
        _say(str(e))
        return 1
    except KeyboardInterrupt:
        return 0
