"""One tools/call, from name and raw arguments to (body, is_error).

The same pipeline serves every transport: surface gate, unknown tool,
argument normalization and validation, handler, error encoding, usage line.
Nothing here knows about MCP; the transports wrap the returned body in a
single text block.
"""

from __future__ import annotations

import importlib
import logging
import time

from .params import normalize_and_validate
from .wire import Caller, ScopeDenied, VerbError, internal_envelope, now_iso
from .tools import ALL_TOOLS, surface_tools

log = logging.getLogger("brain.dispatch")

# tool name -> "module:function"; handlers are imported on first use
HANDLERS: dict[str, str] = {
    "recall": "verbs.recall:recall",
    "remember": "verbs.remember:remember",
    "forget": "verbs.forget:forget",
    "entity": "verbs.entity:entity",
    "context_pack": "verbs.context_pack:context_pack",
    "delta": "verbs.delta:delta",
    "synthesize": "verbs.synthesize:synthesize",
    "put_page": "verbs.pages:put_page",
    "get_page": "verbs.pages:get_page",
    "list_pages": "verbs.pages:list_pages",
    "search": "verbs.pages:search",
    "get_backlinks": "verbs.pages:get_backlinks",
    "whoami": "verbs.info:whoami",
    "status": "verbs.info:status",
    "request_tools": "verbs.info:request_tools",
}

WRITE_TOOLS = {"remember", "forget", "put_page"}

_resolved: dict[str, object] = {}


def handler_for(name: str):
    fn = _resolved.get(name)
    if fn is None:
        mod_name, _, attr = HANDLERS[name].partition(":")
        mod = importlib.import_module(f"..{mod_name}", __package__)
        fn = getattr(mod, attr)
        _resolved[name] = fn
    return fn


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def unknown_tool_envelope(name: str, surface: str) -> dict:
    """Identical for hidden and nonexistent tools: no existence oracle."""
    body = {"error": "unknown_tool", "message": f"Unknown tool: {name}"}
    visible = sorted(t.name for t in surface_tools(surface))
    best = None
    for cand in visible:
        d = _levenshtein(name, cand)
        if d <= 3 and (best is None or d < best[0]):
            best = (d, cand)
    if best:
        body["suggestion"] = f'Did you mean "{best[1]}"?'
    return body


def dispatch(engine, name: str, arguments: dict | None, caller: Caller) -> tuple[dict, bool]:
    """Run one tool call; never raises."""
    visible = {t.name for t in surface_tools(caller.surface)}
    if name not in visible or name not in ALL_TOOLS or name not in HANDLERS:
        return unknown_tool_envelope(name, caller.surface), True
    tool = ALL_TOOLS[name]
    started = time.monotonic()
    body: dict
    is_error = False
    try:
        if not isinstance(arguments, (dict, type(None))):
            from .wire import InvalidParams, GENERIC_PARAM_SUGGESTION

            raise InvalidParams("arguments must be a JSON object", GENERIC_PARAM_SUGGESTION)
        args = normalize_and_validate(tool, arguments)
        if name in WRITE_TOOLS and not caller.can_write:
            raise ScopeDenied(
                f"{name} writes, and this caller has read access only (scope read).",
                "Use a read verb; or, for write access, connect with a bearer token made with "
                "`brain auth token create NAME --write`, or authorize the OAuth client again asking for "
                "the `write` scope (the vault's owner approves it with `brain auth approve CODE`).",
            )
        body = handler_for(name)(engine, args, caller)
    except VerbError as e:
        body, is_error = e.envelope(), True
    except Exception as e:  # the edge: every failure becomes an envelope
        log.exception("tool %s failed", name)
        body, is_error = internal_envelope(e), True
    if tool.is_verb:
        _record_usage(engine, name, caller, body, is_error, started)
    return body, is_error


def _record_usage(engine, name: str, caller: Caller, body: dict, is_error: bool, started: float) -> None:
    entry = {
        "ts": now_iso(),
        "verb": name,
        "surface": caller.surface,
        "transport": caller.transport,
        "remote": caller.remote,
        "ok": not is_error,
        "latency_ms": int((time.monotonic() - started) * 1000),
    }
    if is_error:
        entry["error"] = body.get("error")
    if isinstance(body.get("dropped_count"), int):
        entry["budget_dropped"] = body["dropped_count"]
    if name == "entity" and not is_error:
        entry["entity_found"] = bool(body.get("found"))
    usage = getattr(engine, "usage", None)
    if usage is not None:
        usage.record(entry)
