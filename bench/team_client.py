"""A minimal MCP-over-HTTP client for the team benches: one keep-alive connection, JSON
answers, bearer token; nothing of the SDK client's own work in the figures."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

BRAIN = str(Path(sys.executable).parent / "brain")


class McpHttp:
    """tools/call over one HTTP/1.1 keep-alive connection; `call` raises OSError when the server is gone."""

    def __init__(self, url: str, token: str, timeout: float = 30.0):
        self.url, self.token, self.timeout = url, token, timeout
        self.host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
        self.port = int(port)
        self.sock: socket.socket | None = None
        self.session: dict[str, str] = {}
        self._ids = 1

    def _post(self, msg: dict) -> bytes:
        assert self.sock is not None
        body = json.dumps(msg).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in {
            "Host": f"{self.host}:{self.port}", "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Content-Length": len(body), **self.session}.items())
        self.sock.sendall(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body)
        status, headers = self._file.readline(), {}
        if not status:
            raise ConnectionError("the server closed the connection")
        while (line := self._file.readline()) not in (b"\r\n", b""):
            k, v = line.decode().split(":", 1)
            headers[k.strip().lower()] = v.strip()
        if b" 20" not in status:
            raise ConnectionError(f"HTTP {status.decode().strip()}")
        if "mcp-session-id" in headers:
            self.session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        return self._file.read(int(headers.get("content-length", 0)))

    def connect(self) -> None:
        self.close()
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._file = self.sock.makefile("rb")
        self.session = {}
        self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, name: str, arguments: dict, key: str | None = None) -> tuple[dict, bool]:
        if self.sock is None:
            self.connect()
        self._ids += 1
        params: dict = {"name": name, "arguments": arguments}
        if key is not None:
            params["_meta"] = {"brain/idempotency_key": key}
        try:
            answer = json.loads(self._post({"jsonrpc": "2.0", "id": self._ids, "method": "tools/call",
                                            "params": params}))
        except (OSError, ValueError) as e:
            self.close()
            raise ConnectionError(str(e)) from e
        result = answer["result"]
        return json.loads(result["content"][0]["text"]), bool(result.get("isError"))

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


def _drain(stream) -> None:
    try:
        for _ in stream:
            pass
    except (OSError, ValueError):   # closed under us: the process is being stopped
        pass


def start_serve(env: dict, *extra: str) -> tuple[subprocess.Popen, str]:
    """`brain serve --http --port 0 …`; (process, URL) once it listens."""
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0", *extra], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    lines = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"MCP on (http://\S+/mcp)", line)
        if m:
            # keep reading what it writes: a full pipe would stop the server at its next log line
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return proc, m.group(1)
        if len(lines) > 20:
            break
    proc.kill()
    raise RuntimeError("brain serve --http did not start: " + "".join(lines))


def wait_answering(url: str, token: str, deadline_s: float = 60.0) -> float:
    """Seconds until a recall through `url` answers."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        client = McpHttp(url, token, timeout=5)
        try:
            client.call("recall", {"query": "status"})
            return time.monotonic() - t0
        except (OSError, KeyError):
            time.sleep(0.05)
        finally:
            client.close()
    raise RuntimeError(f"{url} did not answer within {deadline_s:.0f} s")
