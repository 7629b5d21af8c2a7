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
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request

PROTOCOL_VERSION = "2025-06-18"
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
        req = urllib.request.Request(self.url, data=data, method="POST", headers=self._headers())
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout_s)
        except urllib.error.HTTPError as e:
            raise _http_error(self.url, e) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise RemoteError(f"cannot reach {self.url} ({reason}); fix: check the URL and that "
                              "`brain serve --http` runs there") from None
        with resp:
            sid = resp.headers.get("mcp-session-id")
            if sid:
                self.session = sid
            kind = resp.headers.get("content-type", "")
            if resp.status == 202:
                return []
            if kind.startswith("text/event-stream"):
                return _read_events(resp)
            body = resp.read()
            return [json.loads(body)] if body.strip() else []

    def initialize(self, params: dict | None = None) -> dict:
        params = params or {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                            "clientInfo": {"name": "brain-connect", "version": "1"}}
        self.session = None
        answer = self._request("initialize", params)
        self.protocol = (answer.get("result") or {}).get("protocolVersion") or PROTOCOL_VERSION
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
        answer = self._request("tools/call", {"name": name, "arguments": arguments})
        if "error" in answer:
            raise RemoteError(f"{self.url} refused the call: {answer['error'].get('message')}")
        result = answer.get("result") or {}
        text = "\n".join(c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text")
        try:
            return json.loads(text), bool(result.get("isError"))
        except ValueError:
            raise RemoteError(f"{self.url} answered with something that is not a brain envelope") from None

    def close(self) -> None:
        if not self.session:
            return
        req = urllib.request.Request(self.url, method="DELETE", headers=self._headers())
        try:
            urllib.request.urlopen(req, timeout=5).close()
        except (urllib.error.URLError, OSError):
            pass  # the server forgets idle sessions on its own
        self.session = None


def _http_error(url: str, e: urllib.error.HTTPError) -> RemoteError:
    if e.code == 401:
        return RemoteError(f"{url} refused the token (401: unknown, expired or revoked); fix: ask the server's "
                           "owner for a new one (`brain auth token create NAME`) and run "
                           "`brain connect URL --token NEW --name NAME` again", 401)
    if e.code == 404:
        return RemoteError(f"{url}: 404 (the session ended, or this is not the MCP endpoint; it ends in /mcp)", 404)
    if e.code in (403, 421):
        return RemoteError(f"{url} refused this host name ({e.code}); fix: use the name the server was started "
                           "with (`brain serve --http --host NAME`)", e.code)
    return RemoteError(f"{url} answered HTTP {e.code}", e.code)


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
                    client.protocol = a["result"].get("protocolVersion") or PROTOCOL_VERSION
                write(a)
        except RemoteError as e:
            if "id" in msg:
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
