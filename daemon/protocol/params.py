"""Argument normalization and validation, in the reference's order
(docs/protocol.md §1.4).

The MCP SDK's own validation is never used: its errors are prose, and the
protocol wants an `invalid_params` envelope naming the first failing key.

Undeclared argument keys are ignored, as §1.4 step 6 allows (its default
"warn" mode lets the call proceed; rejecting them would fail callers that
send `_meta` or `dry_run`, and agents that add a key a newer server knows).
So every key a handler reads is declared in its tool's schema, and the CLI's
flags are checked against the declarations by a test instead.
"""

from __future__ import annotations

import math

from .errors import GENERIC_PARAM_SUGGESTION, InvalidParams
from .registry import ToolDef

_JSON_TYPES = {
    "string": (str,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


TOO_LONG_FIX = {
    "fact": "Save one claim per fact, in a sentence or two; put long text in a page (put_page) "
            "and remember a short fact that names the page.",
}

# JSON's safe integer range: larger numbers lose precision in most clients,
# and Python cannot turn the largest into floats at all
MAX_SAFE_NUMBER = 2**53 - 1


def _ordinary_number(v) -> bool:
    # abs() first: math.isfinite() cannot take an int too large for a float
    return abs(v) <= MAX_SAFE_NUMBER and (not isinstance(v, float) or math.isfinite(v))


def _is_type(value, type_name: str) -> bool:
    if type_name == "number" and isinstance(value, bool):
        return False  # JSON true is not a number, though Python thinks so
    return isinstance(value, _JSON_TYPES[type_name])


def normalize_and_validate(tool: ToolDef, args: dict | None) -> dict:
    """Return the arguments a handler sees, or raise InvalidParams."""
    out = dict(args or {})
    for p in tool.params:
        if p.required or p.name not in out:
            continue
        v = out[p.name]
        # optional null, and optional "" for strings, mean "not given"
        if v is None or (p.type == "string" and v == ""):
            del out[p.name]
    for p in tool.params:
        present = p.name in out and out[p.name] is not None
        if not present:
            if p.required:
                raise InvalidParams(f"Missing required parameter: {p.name}", GENERIC_PARAM_SUGGESTION)
            continue
        v = out[p.name]
        if not _is_type(v, p.type):
            raise InvalidParams(f'Parameter "{p.name}" must be a {p.type}', GENERIC_PARAM_SUGGESTION)
        if p.type == "number" and not _ordinary_number(v):
            raise InvalidParams(
                f'Parameter "{p.name}" must be a finite number between -{MAX_SAFE_NUMBER} and {MAX_SAFE_NUMBER}',
                "Send an ordinary number; counts and budgets are small whole numbers.")
        if p.enum and v not in p.enum:
            raise InvalidParams(
                f'Parameter "{p.name}" must be one of: {", ".join(p.enum)}', GENERIC_PARAM_SUGGESTION
            )
        cap = p.length_cap
        if cap is not None and len(v) > cap:
            raise InvalidParams(f'Parameter "{p.name}" is {len(v)} characters long; at most {cap} are accepted',
                                TOO_LONG_FIX.get(p.name, f"Shorten {p.name} to at most {cap} characters."))
    return out


def clamp_limit(value, default: int, cap: int) -> int:
    """A count parameter: a whole number from 1 up, capped; anything else means the default."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    if value < 1 or int(value) != value:
        return default
    return min(int(value), cap)
