"""One tools/call, from name and raw arguments to (body, is_error).

The same pipeline serves every transport: surface gate, unknown tool,
argument normalization and validation, handler, error encoding, usage line.
Nothing here knows about MCP; the transports wrap the returned body in a
single text block.
"""

from __future__ import annotations

import logging
import time

from .params import normalize_and_validate
from ...indexer.vault.timestamps import now_iso
from .caller import Caller
from .errors import ScopeDenied, VerbError, internal_envelope
from .tools import REGISTRY

log = logging.getLogger("brain.dispatch")


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
    visible = sorted(t.name for t in REGISTRY.on_surface(surface))
    best = None
    for cand in visible:
        d = _levenshtein(name, cand)
        if d <= 3 and (best is None or d < best[0]):
            best = (d, cand)
    if best:
        body["suggestion"] = f'Did you mean "{best[1]}"?'
    return body


# tools for the vault's owner at the command line only: listed nowhere, and a remote caller is
# told they do not exist (daemon/verbs/facts_admin.py)
OWNER_TOOLS = {
    "facts_move": "brain.daemon.verbs.facts_admin:facts_move",
    "facts_unfiled": "brain.daemon.verbs.facts_admin:facts_unfiled",
}


def _owner_tool(engine, name: str, arguments, caller: Caller) -> tuple[dict, bool]:
    import importlib

    mod_name, _, attr = OWNER_TOOLS[name].partition(":")
    try:
        if not isinstance(arguments, (dict, type(None))):
            from .errors import InvalidParams, GENERIC_PARAM_SUGGESTION

            raise InvalidParams("arguments must be a JSON object", GENERIC_PARAM_SUGGESTION)
        return getattr(importlib.import_module(mod_name), attr)(engine, arguments or {}, caller), False
    except VerbError as e:
        return e.envelope(), True
    except Exception as e:  # the edge: every failure becomes an envelope
        log.exception("tool %s failed", name)
        return internal_envelope(e), True


def dispatch(engine, name: str, arguments: dict | None, caller: Caller) -> tuple[dict, bool]:
    """Run one tool call; never raises."""
    if name in OWNER_TOOLS and not caller.remote:
        return _owner_tool(engine, name, arguments, caller)
    tool = REGISTRY.get(name)
    if tool is None or not tool.on(caller.surface):
        return unknown_tool_envelope(name, caller.surface), True
    started = time.monotonic()
    body: dict
    is_error = False
    try:
        if not isinstance(arguments, (dict, type(None))):
            from .errors import InvalidParams, GENERIC_PARAM_SUGGESTION

            raise InvalidParams("arguments must be a JSON object", GENERIC_PARAM_SUGGESTION)
        args = normalize_and_validate(tool, arguments)
        if tool.writes and not caller.can_write:
            raise ScopeDenied(
                f"{name} writes, and this caller has read access only (scope read).",
                "Use a read verb; or, for write access, connect with a bearer token made with "
                "`brain auth token create NAME --write`, or authorize the OAuth client again asking for "
                "the `write` scope (the vault's owner approves it with `brain auth approve CODE`).",
            )
        body = REGISTRY.handler(name)(engine, args, caller)
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
    usage = engine.usage   # None: this engine keeps no usage log (daemon/stores/engine.py)
    if usage is not None:
        usage.record(entry)
