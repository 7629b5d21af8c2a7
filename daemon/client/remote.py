"""A lean Streamable HTTP MCP client for remote brains (`brain connect`, `--remote NAME`).

Standard library only, like the socket client: `brain recall --remote NAME`
and the session-start hook must not pay for the MCP SDK's import. It posts
JSON-RPC messages with the bearer token and the session id, and reads the
answer whether the server sends JSON or an event stream.

`relay_stdio` is `brain serve --remote NAME`: an MCP host that cannot speak
HTTP talks stdio to it, and it forwards each message to the remote server
(requests in parallel, so a slow synthesize never holds up a recall). When
the remote session expires (the server restarted), it opens a new one with
the host's own initialize and carries on.

Connections are kept alive (`_Pool`): a `brain recall --remote` (initialize,
initialized, the call, the DELETE) opens one TCP connection, and one TLS
handshake over https, instead of four. Behind a proxy named by the
environment every message takes urllib's path, one connection each.
"""

from __future__ import annotations

import http.client
import json
import select
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING

from ..protocol.caller import IDEMPOTENCY_META
from ..protocol.version import MCP_PROTOCOL_VERSION
from .call_keys import CallKeys, fresh_key, wants_key

if TYPE_CHECKING:  # loaded when the first https connection opens
    import ssl

UNAUTHORIZED = -32001  # JSON-RPC server error: the remote refused the credential
CALL_GRACE_S = 600.0  # after the host closes stdin, how long its last calls may still take


class RemoteError(RuntimeError):
    """The remote brain could not be reached or refused us; the message names the fix."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class HttpMcp:
    """One MCP session with a remote `brain serve --http`."""

    def __init__(self, url: str, token: str, timeout_s: float = 120.0):
        self.url = url
        self.token = token
        self.timeout_s = timeout_s
        self.session: str | None = None
        self.protocol: str | None = None
        self._ids = iter(range(1, 1 << 62))
        self._lock = threading.Lock()
        # urllib honours https_proxy / http_proxy / no_proxy and http.client does not: when a proxy
        # applies to this URL, every message goes through urllib (one connection each), as before
        # (with the proxies read now: urlopen's shared opener keeps those of its first use)
        proxies = urllib.request.getproxies()
        req = urllib.request.Request(url)
        if proxies.get(req.type) and not urllib.request.proxy_bypass(req.host):
            self._pool: _Pool | None = None
            self._opener: urllib.request.OpenerDirector | None = urllib.request.build_opener(
                urllib.request.ProxyHandler(proxies))
        else:
            self._pool, self._opener = _Pool(url), None

    def _headers(self) -> dict:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "Authorization": f"Bearer {self.token}"}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        if self.protocol:
            h["MCP-Protocol-Version"] = self.protocol
        return h

    def post(self, msg: dict | bytes) -> list[dict]:
        """Send one message; the messages the server answers with (none for a notification)."""
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        return self._exchange("POST", data, self.timeout_s, self._answer)

    def _exchange(self, method: str, data: bytes | None, timeout_s: float, answer) -> list[dict]:
        """One request; `answer(response)` reads what the server sent."""
        try:
            if self._pool is not None:
                return self._pool.exchange(method, data, self._headers(), timeout_s, answer)
            opener = self._opener
            assert opener is not None   # __init__ sets one of the pool and the opener
            req = urllib.request.Request(self.url, data=data, method=method, headers=self._headers())
            try:
                resp = opener.open(req, timeout=timeout_s)
            except urllib.error.HTTPError as e:
                raise _http_error(self.url, e.code) from None
            with resp:
                return answer(resp)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = e.reason if isinstance(e, urllib.error.URLError) else e  # an SSLError's own .reason is terse
            raise RemoteError(f"cannot reach {self.url} ({reason}); fix: check the URL and that "
                              "`brain serve --http` runs there") from None

    def _answer(self, resp) -> list[dict]:
        """The messages of one response (an error status is a RemoteError)."""
        if not 200 <= resp.status < 300:  # urllib raised HTTPError for these (and followed redirects)
            resp.read()  # the whole answer is read: the connection can serve the next request
            raise _http_error(self.url, resp.status)
        sid = resp.headers.get("mcp-session-id")
        if sid:
            self.session = sid
        kind = resp.headers.get("content-type", "")
        body = resp.read() if not kind.startswith("text/event-stream") else None
        if resp.status == 202:
            return []
        if body is None:
            return _read_events(resp)
        return [json.loads(body)] if body.strip() else []

    def initialize(self, params: dict | None = None) -> dict:
        params = params or {"protocolVersion": MCP_PROTOCOL_VERSION, "capabilities": {},
                            "clientInfo": {"name": "brain-connect", "version": "1"}}
        self.session = None
        answer = self._request("initialize", params)
        self.protocol = (answer.get("result") or {}).get("protocolVersion") or MCP_PROTOCOL_VERSION
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def _request(self, method: str, params: dict) -> dict:
        with self._lock:
            rid = f"brain-{next(self._ids)}"
        for m in self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}):
            if m.get("id") == rid:
                return m
        raise RemoteError(f"{self.url} sent no answer to {method}")

    def send(self, name: str, arguments: dict) -> tuple[dict, bool]:
        """One tools/call: (body, is_error), like a call to the local daemon."""
        if self.session is None:
            self.initialize()
        params = {"name": name, "arguments": arguments}
        if wants_key({"method": "tools/call", "params": params}):
            # the pool may send it twice (see _Pool.exchange): the key makes that one call
            params["_meta"] = {IDEMPOTENCY_META: fresh_key()}
        answer = self._request("tools/call", params)
        if "error" in answer:
            raise RemoteError(f"{self.url} refused the call: {answer['error'].get('message')}")
        result = answer.get("result") or {}
        text = "\n".join(c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text")
        try:
            return json.loads(text), bool(result.get("isError"))
        except ValueError:
            raise RemoteError(f"{self.url} answered with something that is not a brain envelope") from None

    def close(self) -> None:
        """End the session (DELETE), then close the connections kept for it."""
        if self.session:
            try:
                self._exchange("DELETE", None, 5.0, _drain)
            except RemoteError:
                pass  # the server forgets idle sessions on its own
            self.session = None
        if self._pool is not None:
            self._pool.close()


class _Pool:
    """Keep-alive connections to one server, one request at a time on each.

    A request takes an idle connection (or opens one) and has it to itself
    until its answer is read; the connection goes back only when the answer
    was read to its end and the server did not say `Connection: close` (an
    event stream we stop reading after the JSON-RPC answer is closed instead).
    At most MAX_IDLE wait; one idle longer than REUSE_IDLE_S is closed, not
    used: the server closes a silent keep-alive connection after KEEP_ALIVE_S
    (5 s, daemon/http/limits.py), and a request sent as it closes is lost.
    """

    MAX_IDLE = 4
    REUSE_IDLE_S = 3.0  # 2 s under the server's 5: our clock starts after its own, by a trip at least

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.max_idle_s = self.REUSE_IDLE_S
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []  # (connection, idle since)
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None

    def _open(self, timeout_s: float) -> http.client.HTTPConnection:
        if not self.https:
            return http.client.HTTPConnection(self.host, self.port, timeout=timeout_s)
        if self._tls is None:
            import ssl

            # what urllib uses for https: the system's CA certificates, host name checked
            self._tls = ssl.create_default_context()
            self._tls.set_alpn_protocols(["http/1.1"])
        return http.client.HTTPSConnection(self.host, self.port, timeout=timeout_s, context=self._tls)

    def _take(self, timeout_s: float) -> tuple[http.client.HTTPConnection, bool]:
        """(a connection, whether it served a request before)."""
        now = time.monotonic()
        while True:
            with self._lock:
                stale = [c for c, since in self._idle if now - since >= self.max_idle_s]
                self._idle = [(c, since) for c, since in self._idle if now - since < self.max_idle_s]
                conn = self._idle.pop()[0] if self._idle else None  # the most recent: the least likely closed
            for c in stale:
                c.close()
            if conn is None:
                return self._open(timeout_s), False
            if not _readable(conn.sock):  # readable: closed by the server
                conn.sock.settimeout(timeout_s)
                return conn, True
            conn.close()

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.MAX_IDLE:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def exchange(self, method: str, data: bytes | None, headers: dict, timeout_s: float, answer) -> list[dict]:
        """One request and `answer(response)`; a reused connection the server had closed is retried once.

        The retry is only for a connection that served a request before and
        fails before any byte of an answer: the server closed it as we sent.
        The server closes a keep-alive connection only while no request is
        in progress on it (its idle timeout, its cap on connections, a
        shutdown; daemon/http/limits.py), so a request that meets such a
        close was never read, and sending it again runs it once. Were the
        server instead to die in the middle of the call, the fresh
        connection finds nothing listening (an error, as before) or a new
        server without our session (404). Even then a second run of a write
        keeps one copy: remember with an entity finds the same text and
        answers `duplicate`, forget of a fact already expired answers
        `expired: false`, put_page writes the same bytes again (or, given
        `expected_hash`, refuses: the page changed, by the first run), and a
        remember carries an idempotency key, so its second run answers what
        the first wrote (docs/protocol.md §3.2).
        """
        conn, reused = self._take(timeout_s)
        headers = {**headers, "User-Agent": "brain-remote"}
        try:
            try:
                conn.request(method, self.target, body=data, headers=headers)
                resp = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if not reused:
                    raise
                conn, reused = self._open(timeout_s), False
                conn.request(method, self.target, body=data, headers=headers)
                resp = conn.getresponse()
            messages = answer(resp)
        except BaseException:
            conn.close()
            raise
        if resp.isclosed() and not resp.will_close:
            self._give(conn)
        else:
            conn.close()  # the server ends it, or we left part of an event stream unread
        return messages

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()


def _drain(resp) -> list[dict]:
    resp.read()
    return []


def _readable(sock) -> bool:
    """An idle keep-alive socket with something to read has been closed (or spoken out of turn)."""
    return sock is None or bool(select.select([sock], [], [], 0)[0])


def _http_error(url: str, code: int) -> RemoteError:
    if code == 401:
        return RemoteError(f"{url} refused the token (401: unknown, expired or revoked); fix: ask the server's "
                           "owner for a new one (`brain auth token create NAME`) and run "
                           "`brain connect URL --token NEW --name NAME` again", 401)
    if code == 404:
        return RemoteError(f"{url}: 404 (the session ended, or this is not the MCP endpoint; it ends in /mcp)", 404)
    if code in (403, 421):
        return RemoteError(f"{url} refused this host name ({code}); fix: use the name the server was started "
                           "with (`brain serve --http --host NAME`)", code)
    return RemoteError(f"{url} answered HTTP {code}", code)


def _read_events(resp) -> list[dict]:
    """The JSON-RPC messages of a server-sent event stream, until the server closes it."""
    out, data = [], []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and data:
            out.append(json.loads("\n".join(data)))
            data = []
            if "result" in out[-1] or "error" in out[-1]:
                break  # the answer: the stream has nothing more for us
    if data:
        out.append(json.loads("\n".join(data)))
    return out


def relay_stdio(url: str, token: str, stdin=None, stdout=None) -> int:
    """`brain serve --remote NAME`: MCP over stdio, forwarded to a remote brain over HTTP."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    client = HttpMcp(url, token)
    out_lock = threading.Lock()
    keys = CallKeys()  # a retried remember runs once (see call_keys)
    init_params: dict | None = None
    running: list[threading.Thread] = []

    def write(msg: dict) -> None:
        with out_lock:
            stdout.write(json.dumps(msg).encode() + b"\n")
            stdout.flush()

    def forward(msg: dict) -> None:
        try:
            try:
                answers = client.post(msg)
            except RemoteError as e:
                if e.status != 404 or init_params is None:
                    raise
                client.initialize(init_params)  # the remote session ended: open another, then retry
                answers = client.post(msg)
            for a in answers:
                if msg.get("method") == "initialize" and "result" in a:
                    client.protocol = a["result"].get("protocolVersion") or MCP_PROTOCOL_VERSION
                write(a)
            if "id" in msg:
                keys.answered(msg["id"])
        except RemoteError as e:
            if "id" in msg:
                keys.unanswered(msg["id"])  # it may have run: its retry carries the same key
                code = UNAUTHORIZED if e.status == 401 else -32603
                write({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": code, "message": str(e)}})
            print(f"brain serve --remote: {e}", file=sys.stderr, flush=True)

    for line in stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if msg.get("method") == "initialize":
            init_params = msg.get("params")
            client.session = client.protocol = None
            forward(msg)  # in order: everything after it needs the session
        elif "id" in msg and "method" in msg:
            keys.stamp(msg)
            t = threading.Thread(target=forward, args=(msg,), daemon=True)
            t.start()
            running.append(t)
        else:
            forward(msg)
        running[:] = [t for t in running if t.is_alive()]
    for t in running:  # end of input: the host still gets the answers it asked for
        t.join(CALL_GRACE_S)
    client.close()
    return 0
