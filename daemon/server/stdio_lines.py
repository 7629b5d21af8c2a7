"""This process's stdin and stdout as the MCP SDK's stdio transport streams, each line checked first.

`brain serve --no-daemon` serves MCP on its own stdio. The SDK's reader
hands every line to its parser and answers nothing when the parser refuses
it, or when it reads a request whose `id` is null, 1.5 or an object as a
notification: the host waits for ever. Here each line passes the checks the
daemon's socket makes (`wire_guard`) before the SDK sees it, and a refused
line is answered at once with the JSON-RPC error the socket gives
(docs/protocol.md §1.6).

While serving, fd 0 reads the null device and fd 1 writes to stderr, so a
stray print or a child process cannot read the host's requests or corrupt
the answers; the wire goes through private duplicates, and both are put
back when serving ends.
"""

from __future__ import annotations

import io
import os
from contextlib import asynccontextmanager

import anyio

from ..protocol.wire_guard import refusal as line_refusal


class _LockedOut:
    """The wire's stdout for the SDK's writer and ours: whole lines, one writer at a time."""

    def __init__(self, raw: io.BufferedWriter):
        self.raw = raw
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self.raw.write, text.encode("utf-8"))

    async def flush(self) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self.raw.flush)


class _CheckedLines:
    """Async iteration over stdin's lines, as text, with refused lines answered and skipped."""

    def __init__(self, raw: io.BufferedReader, out: _LockedOut):
        self.raw, self.out = raw, out

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            line = await anyio.to_thread.run_sync(self.raw.readline)
            if not line:
                raise StopAsyncIteration
            refused = line_refusal(line)
            if refused is None:
                return line.decode("utf-8", "replace")
            await self.out.write(refused.decode())
            await self.out.flush()


@asynccontextmanager
async def checked_stdio():
    """(read_stream, write_stream) of the SDK's stdio transport over checked lines."""
    from mcp.server.stdio import stdio_server

    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    out = _LockedOut(os.fdopen(wire_out, "wb"))
    lines = _CheckedLines(os.fdopen(wire_in, "rb"), out)
    try:
        async with stdio_server(stdin=lines, stdout=out) as streams:
            yield streams
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
