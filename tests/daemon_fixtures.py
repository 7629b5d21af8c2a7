"""Fixtures and clients for the daemon and transport tests.

Real processes only: daemons are spawned the way clients spawn them, MCP
sessions use the official SDK client (stdio, Streamable HTTP, or a thin
Unix-socket adapter for the SDK's ClientSession), and every daemon a test
started is stopped at teardown by pid, never by name.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import weakref
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

BRAIN = str(Path(sys.executable).parent / "brain")

PAGES = {
    "people/alice-example.md": "---\ntitle: Alice Example\naliases: [Ally]\ntype: person\n---\n# Alice Example\n\n"
                               "Works at [[Acme]].\n\n## Timeline\n- 2026-01-05: joined Acme\n",
    "people/bob.md": "---\ntitle: Bob Builder\n---\n# Bob Builder\n\nBuilds things with [[Alice Example]].\n",
    "companies/acme.md": "---\ntitle: Acme\ntype: company\n---\n# Acme\n\nA company.\n",
    "people/secret.md": "---\ntitle: Secret Person\nvisibility: private\n---\n# Secret Person\n\nPrivate page.\n",
}


def write_vault(root: Path) -> Path:
    for rel, text in PAGES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def small_vault(tmp_path) -> Path:
    return write_vault(tmp_path / "v")


@pytest.fixture
def configured(places, small_vault, monkeypatch):
    """A config naming the vault, with the embedding model off (keeps daemons light)."""
    from brain.daemon import config as config_mod

    config_mod.save(places.config_file, {"vault": str(small_vault), "embeddings.enabled": False,
                                         "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
    monkeypatch.setenv("BRAIN_VAULT", str(small_vault))
    return small_vault


def child_env() -> dict:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env.pop("BRAIN_MCP_FORCE_SURFACE", None)
    return env


def daemon_pids(places) -> list[int]:
    pids = []
    for f in places.runtime_dir.glob("*.pid") if places.runtime_dir.exists() else []:
        try:
            pid = json.loads(f.read_text()).get("pid")
        except (OSError, ValueError):
            continue
        if isinstance(pid, int):
            pids.append(pid)
    return pids


def alive(pid: int) -> bool:
    from brain.daemon.client.probe import pid_alive

    return pid_alive(pid)


def stop_pid(pid: int, timeout: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def daemon_pids_for(marker: str) -> list[int]:
    """Daemon processes whose command line names `marker` (a test's own tmp path)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            args = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"brain.daemon.server" in args and any(marker.encode() in a for a in args):
            pids.append(int(d.name))
    return pids


@pytest.fixture
def reaper(places, tmp_path):
    """Stops every daemon this test started, even indirectly: by pid file and
    by the test's own tmp path on the command line (vaults live under it)."""
    seen: set[int] = set()

    def note():
        seen.update(daemon_pids(places))

    yield note
    note()
    seen.update(daemon_pids_for(str(tmp_path)))
    for pid in seen:
        stop_pid(pid)
    # a spawner may have left one still starting: look once more
    for pid in daemon_pids_for(str(tmp_path)):
        stop_pid(pid)


@pytest.fixture
def daemon(places, configured, reaper):
    """A running daemon for the configured vault; its pid and socket."""
    from brain.daemon.client.spawn import connect_or_start
    from brain.daemon.rendezvous import read_pid_file

    sock, _ = connect_or_start(places, configured)
    sock.close()
    reaper()
    info = read_pid_file(places, configured)
    yield {"pid": info["pid"], "socket": places.socket_path(configured), "vault": configured}


def run_brain(*args, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([BRAIN, *args], input=input, capture_output=True, text=True, timeout=timeout,
                          env=child_env())


def body_of(result) -> dict:
    """The JSON body of a CallToolResult: exactly one text block."""
    assert len(result.content) == 1, result.content
    assert result.content[0].type == "text"
    return json.loads(result.content[0].text)


# -- SDK clients -------------------------------------------------------------

@asynccontextmanager
async def stdio_session(args: list[str], errlog=None):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=BRAIN, args=args, env=child_env())
    kw = {"errlog": errlog} if errlog is not None else {}
    async with stdio_client(params, **kw) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


@asynccontextmanager
async def socket_session(path: Path, preamble: dict | None):
    """The SDK's ClientSession over the daemon's Unix socket (newline-delimited JSON-RPC)."""
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.shared.message import SessionMessage

    stream = await anyio.connect_unix(str(path))
    if preamble is not None:
        await stream.send(json.dumps(preamble).encode() + b"\n")
    r_send, r_recv = anyio.create_memory_object_stream(16)
    w_send, w_recv = anyio.create_memory_object_stream(16)

    async def pump_in():
        buf = b""
        async with r_send:
            while True:
                try:
                    chunk = await stream.receive(1 << 20)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        await r_send.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))

    async def pump_out():
        async with w_recv:
            async for sm in w_recv:
                await stream.send(sm.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_in)
        tg.start_soon(pump_out)
        async with ClientSession(r_recv, w_send) as s:
            await s.initialize()
            yield s
        tg.cancel_scope.cancel()
    await stream.aclose()


@asynccontextmanager
async def http_session(url: str, token: str | None):
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as hc:
        async with streamable_http_client(url, http_client=hc) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


# -- raw socket helpers (fault tests) -----------------------------------------

def raw_connect(path: Path, preamble: dict | None = None, timeout: float = 10.0) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(path))
    if preamble is not None:
        s.sendall(json.dumps(preamble).encode() + b"\n")
    return s


def send_lines(s: socket.socket, *msgs) -> None:
    s.sendall(b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in msgs))


_BUFFERS: "weakref.WeakKeyDictionary[socket.socket, tuple[bytearray, list]]" = weakref.WeakKeyDictionary()


def read_until_id(s: socket.socket, want) -> dict:
    """Read JSON lines until the message with id `want` (None: the first error without id).

    Answers to concurrent requests arrive in any order: messages read past
    stay queued for the next call on the same socket.
    """
    buf, early = _BUFFERS.setdefault(s, (bytearray(), []))
    for i, msg in enumerate(early):
        if msg.get("id") == want:
            return early.pop(i)
    while True:
        while b"\n" in buf:
            i = buf.index(b"\n")
            line = bytes(buf[:i])
            del buf[: i + 1]
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg
            early.append(msg)
        chunk = s.recv(1 << 20)
        if not chunk:
            raise EOFError("connection closed before the answer")
        buf += chunk


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tool_call(req_id, name, arguments) -> dict:
    return {"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def call_text(msg: dict) -> dict:
    content = msg["result"]["content"]
    assert len(content) == 1
    return json.loads(content[0]["text"])
