"""The MCP server: the SDK's low-level Server wired to our dispatch pipeline.

Every transport (stdio in-process, the daemon's Unix socket, Streamable
HTTP) serves this one server. The SDK does the JSON-RPC and the handshake;
we do everything about tools: the listing comes from the tool registry, each call
goes through `dispatch.dispatch`, and the answer is exactly one text block
of JSON (`isError: true` for error envelopes). The SDK never validates tool
arguments (the low-level handlers in 2.x do not), so `invalid_params`
envelopes come from our own validator, as docs/protocol.md §1.4 requires.

Tool calls run in worker threads: a slow call (synthesize, a big
context_pack) never stalls the event loop that reads everyone else's
requests. (The HTTP front end's calls only wait on the daemon's socket:
they are awaited on the loop.)
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Union, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from ... import __version__
from ..protocol.dispatch import dispatch
from ..protocol.caller import Caller
from ..protocol.errors import Unavailable
from ..protocol.server_paths import for_remote
from ..protocol.tools import REGISTRY

if TYPE_CHECKING:
    from .store_engine import StoreEngine
    from .vault_engine import VaultEngine

# the engines this process serves: one vault's, or a front end's over a shared store
ServedEngine = Union["VaultEngine", "StoreEngine"]

log = logging.getLogger("brain.mcp")

SERVER_NAME = "brain"
# worker threads for tool calls; SQLite readers and the facts writer take
# their own locks, so this only bounds memory and context switching
CALL_THREADS = 8
# tools declared `slow` (protocol/tools.py) get their own threads, so a burst
# of them can never starve the fast verbs of workers
SLOW_CALL_THREADS = 4
# a call that arrives while the index is still attaching waits this long,
# then runs with what is ready (keyword-only search, `search_degraded`)
READY_WAIT_S = 5.0


class CallGate:
    """Counts tool calls in flight so a stopping daemon can drain them.

    Once closed, new calls are refused with `unavailable` (the client's next
    connection reaches the new daemon) while running ones finish.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0
        self.closed = False

    def enter(self) -> bool:
        with self._cond:
            if self.closed:
                return False
            self._running += 1
            return True

    def leave(self) -> None:
        with self._cond:
            self._running -= 1
            if self._running == 0:
                self._cond.notify_all()

    @property
    def running(self) -> int:
        return self._running

    def close_and_wait(self, timeout_s: float) -> bool:
        """Refuse new calls and wait for the running ones; True when all finished."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self.closed = True
            while self._running > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True


def text_result(body: dict, is_error: bool) -> dict:
    """One CallToolResult: a single text block holding the JSON body."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(body, ensure_ascii=False)}]}
    if is_error:
        result["isError"] = True
    return result


def tool_listing(surface: str) -> list[dict]:
    """The advertised tools of a surface, without outputSchema (docs/protocol.md §1.2)."""
    return [t.listing() for t in REGISTRY.on_surface(surface)]


CallFn = Callable[[str, Any, Caller], "tuple[dict, bool]"]
# the HTTP front end's: it only waits on the daemon's socket, so it runs on the event loop
AsyncCallFn = Callable[[str, Any, Caller], "Awaitable[tuple[dict, bool]]"]


def vault_lost_envelope(engine: ServedEngine) -> dict | None:
    """An `unavailable` envelope when the vault folder went away under us, else None.

    When it is gone (deleted, moved, replaced), this process asks itself to
    stop: its open facts log is no longer the file at the vault's path, so
    every later write would be acknowledged and lost. The next command then
    starts a fresh daemon, or says the folder is missing.
    """
    why = engine.vault_lost()
    if why is None:
        return None
    vault = engine.vault
    if why == "unreadable":
        return Unavailable(f"the vault folder {vault} cannot be read (permission denied).",
                           f"Give your user access again (e.g. `chmod u+rwx {vault}`), then retry.").envelope()
    if not engine.stop_requested.is_set():
        engine.stop_requested.set()
        log.error("the vault %s was deleted, moved or replaced: stopping", vault)
        import os
        import signal

        os.kill(os.getpid(), signal.SIGTERM)
    return Unavailable(
        f"the vault folder {vault} (or its .brain folder) was deleted, moved or replaced while the "
        "server ran; it stopped so that nothing is written to files no longer in the vault.",
        "Restore the folder, or run `brain init PATH` with its new place; then run the command again "
        "(a fresh daemon starts by itself).",
    ).envelope()


def engine_dispatcher(engine: ServedEngine, *, gate: CallGate | None = None,
                      ready: threading.Event | None = None) -> CallFn:
    """The blocking call function for an engine in this process (daemon or --no-daemon)."""
    gate = gate or CallGate()

    def dispatch_call(name: str, arguments, caller: Caller) -> tuple[dict, bool]:
        if not gate.enter():
            return Unavailable(
                "the brain daemon is shutting down.",
                "Retry the call: the next connection starts a fresh daemon.",
            ).envelope(), True
        try:
            lost = vault_lost_envelope(engine)
            if lost is not None:
                body, is_error = lost, True
            else:
                # status reports the warm-up, so it answers at once instead of waiting for it
                if ready is not None and not ready.is_set() and name != "status":
                    ready.wait(READY_WAIT_S)
                body, is_error = dispatch(engine, name, arguments, caller)
            # errors name paths for the owner; a remote caller gets them without (server_paths.py)
            return (for_remote(body) if is_error and caller.remote else body), is_error
        finally:
            gate.leave()

    def start_early(name: str, arguments) -> None:
        """Start what a call will need before it reaches a worker thread: a recall's query
        embedding (docs/architecture.md, "On the hot path"). Only a text is embedded, and
        nothing is answered from it; the verb validates the call as ever."""
        if name == "recall" and isinstance(arguments, dict):
            query = arguments.get("query")
            if isinstance(query, str) and query.strip():
                from ..verbs import steps   # the verbs load with the first call, not with this module

                steps.prefetch_embedding(engine, query.strip(), query=True)

    dispatch_call.start_early = start_early  # type: ignore[attr-defined]  # a function's own attribute, read by the socket server
    return dispatch_call


def build_server(
    call: CallFn | AsyncCallFn,
    caller_for: Callable[[Any], Caller],
    *,
    limiter: anyio.CapacityLimiter | None = None,
    slow_limiter: anyio.CapacityLimiter | None = None,
) -> Server:
    """A low-level SDK Server answering tools/list and tools/call.

    `call(name, arguments, caller)` runs one tool call (blocking, in a worker
    thread; a coroutine function is awaited on the loop instead) and returns
    (body, is_error); `caller_for(ctx)` says who is calling: a fixed Caller
    for a socket or stdio connection, the token's Caller for an HTTP request.
    """
    # (surface, registry generation) -> listing: a tool registered later is listed at once
    listings: dict[tuple[str, int], list[dict]] = {}
    call_is_async = inspect.iscoroutinefunction(call)
    # a CapacityLimiter binds to the running event loop: make them on first use
    limiters: dict[str, anyio.CapacityLimiter | None] = {"fast": limiter, "slow": slow_limiter}

    def limiter_for(name: str) -> anyio.CapacityLimiter:
        tool = REGISTRY.get(name)
        kind = "slow" if tool is not None and tool.slow else "fast"
        made = limiters[kind]
        if made is None:
            made = limiters[kind] = anyio.CapacityLimiter(SLOW_CALL_THREADS if kind == "slow" else CALL_THREADS)
        return made

    async def on_list_tools(ctx, params) -> dict:
        key = (caller_for(ctx).surface, REGISTRY.generation)
        if key not in listings:
            listings[key] = tool_listing(key[0])
        return {"tools": listings[key]}

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> dict:
        caller = caller_for(ctx).for_call(params.meta)
        start_early = getattr(call, "start_early", None)
        if start_early is not None:  # on the loop, so it runs while the call waits for a worker thread
            start_early(params.name, params.arguments)
        # `arguments` is whatever the client sent; dispatch validates it
        if call_is_async:  # it only waits on a socket (the HTTP front end): no worker thread
            body, is_error = await cast(AsyncCallFn, call)(params.name, params.arguments, caller)
        else:
            body, is_error = await anyio.to_thread.run_sync(
                cast(CallFn, call), params.name, params.arguments, caller, limiter=limiter_for(params.name)
            )
        return text_result(body, is_error)

    server = Server(
        SERVER_NAME,
        version=__version__,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.append(explain_invalid_params)
    return server


def _json_kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    kinds: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}
    return kinds.get(type(value), "null")


async def explain_invalid_params(ctx, call_next):
    """JSON-RPC -32602 that says what is wrong; the SDK's own has an empty `data`."""
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    params = ctx.params if isinstance(ctx.params, dict) else {}
    args = params.get("arguments")
    if ctx.method == "tools/call" and args is not None and not isinstance(args, dict):
        raise MCPError(types.INVALID_PARAMS, "Invalid params: tools/call arguments must be a JSON object "
                       f"(or left out), not {_json_kind(args)}", data={"param": "arguments"})
    try:
        return await call_next(ctx)
    except ValidationError as e:
        first = e.errors()[0] if e.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())) or "params"
        raise MCPError(types.INVALID_PARAMS, f"Invalid params for {ctx.method}: {where}: "
                       f"{first.get('msg', 'not valid')}", data={"param": where}) from None


def fixed_caller(caller: Caller) -> Callable[[Any], Caller]:
    return lambda ctx: caller


async def serve_stdio(engine, caller: Caller, ready: threading.Event | None = None,
                      close: Callable[[], None] | None = None, drain_s: float = 10.0) -> None:
    """Serve MCP on this process's stdin/stdout until stdin closes or a stop signal.

    On SIGTERM/SIGINT/SIGHUP the calls in flight finish, the engine closes
    and the process exits: the stdin reader sits in a thread that no
    cancellation can interrupt, so waiting for it could hang forever.
    """
    import os
    import signal

    from .stdio_lines import checked_stdio

    gate = CallGate()
    server = build_server(engine_dispatcher(engine, gate=gate, ready=ready), fixed_caller(caller))
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
                async for _ in signals:
                    await anyio.to_thread.run_sync(gate.close_and_wait, drain_s)
                    try:
                        (close or engine.close)()
                    finally:
                        os._exit(0)

        tg.start_soon(stop_on_signal)
        async with checked_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()
