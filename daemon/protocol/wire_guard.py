"""Checks on one raw JSON-RPC line before a JSON parser sees it.

Every transport reads newline-framed JSON-RPC. A hostile or broken line must
cost the sender one error answer, never the connection or the process: a
recursive parser dies on deep nesting, Python refuses integers past 4,300
digits, and a line that is not UTF-8 cannot be parsed at all. So before
parsing, a line is scanned without recursion: its nesting depth, its
encoding, and its top-level `id` (read from the raw bytes, so that even a
line the parser refuses is answered with the id its sender waits on).

Standard library only: the `brain serve` relay uses it too.
"""

from __future__ import annotations

import json
import re

# JSON-RPC error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# no tool argument nests anywhere near this; the SDK's parser gives up past 255
MAX_DEPTH = 64
# Python's int() refuses longer digit strings (sys.int_info.default_max_str_digits)
MAX_INT_DIGITS = 4300

# a JSON string (unrolled so long strings cost one C-level match)
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRING_RE = re.compile(_STRING, re.S)
_BRACKETS_RE = re.compile(rb"[\[\]{}]")
_TOKEN_RE = re.compile(_STRING + rb"|[\[\]{}:,]|-?[0-9][0-9.eE+\-]*|true|false|null", re.S)


def _outside_strings(line: bytes) -> bytes:
    return _STRING_RE.sub(b'""', line)


def nesting_depth(line: bytes) -> int:
    """The deepest bracket nesting of a JSON text, counted iteratively."""
    bare = _outside_strings(line)
    if bare.count(b"[") + bare.count(b"{") <= MAX_DEPTH:
        return bare.count(b"[") + bare.count(b"{")  # an upper bound, and small enough
    depth = deepest = 0
    for m in _BRACKETS_RE.finditer(bare):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


def _scalar(tok: bytes):
    """A string or integer token as a JSON-RPC id; None for anything else."""
    if tok.startswith(b'"'):
        try:
            value = json.loads(tok.decode("utf-8", "replace"))
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    if re.fullmatch(rb"-?[0-9]{1,%d}" % MAX_INT_DIGITS, tok):
        return int(tok)
    return None


def _members(line: bytes):
    """(key, first token of its value) for each member of a line's top-level object, read token by token.

    Works on lines no parser accepts (too deep, not UTF-8, cut short); the
    value of a member that is an object or array is given as its opening
    bracket.
    """
    depth = 0
    expect_key = False
    key = None
    for m in _TOKEN_RE.finditer(line):
        tok = m.group()
        if tok in (b"{", b"["):
            if depth == 0 and tok != b"{":
                return
            if depth == 1 and key is not None:
                yield key, tok
            depth += 1
            expect_key = depth == 1
            key = None
        elif tok in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return
        elif depth != 1:
            continue
        elif tok == b",":
            expect_key, key = True, None
        elif tok == b":":
            expect_key = False
        elif expect_key and tok.startswith(b'"'):
            key = _scalar(tok)
            if not isinstance(key, str):
                key = None
        elif key is not None:
            yield key, tok
            key = None


def top_level(line: bytes, keys: tuple[str, ...] = ("id",)) -> dict:
    """The scalar values of `keys` in a line's top-level object, read from the raw bytes.

    Stops as soon as every key is found. Keys whose value is not a string or
    an integer are left out.
    """
    found: dict = {}
    for key, tok in _members(line):
        if key in keys and key not in found:
            value = _scalar(tok)
            if value is not None and not isinstance(value, bool):
                found[key] = value
            if len(found) == len(keys):
                break
    return found


def bad_id(line: bytes) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when a line's top-level `id` is neither a string nor an integer.

    JSON-RPC 2.0 answers such a request with Invalid Request and `id` null; a
    parser that reads it as a notification (no id) would answer nothing, and
    its sender would wait for ever. Call it only on lines `problem` let pass
    (their depth is bounded, so the parser's recursion is too).
    """
    try:
        obj = json.loads(line, parse_int=_bounded_int)
    except ValueError:  # not JSON: read the id's first token from the raw bytes
        tok = next((t for k, t in _members(line[:65536]) if k == "id"), None)
        kind = None if tok is None or tok.startswith(b'"') or re.fullmatch(rb"-?[0-9]+", tok) else \
            {b"{": dict, b"[": list, b"null": None.__class__, b"true": bool, b"false": bool}.get(tok, float)
    else:
        if not isinstance(obj, dict) or "id" not in obj:
            return None
        value = obj["id"]
        kind = None if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) \
            else type(value)
    if kind is None:
        return None
    what = {dict: "an object", list: "an array", type(None): "null", bool: "a boolean"}.get(
        kind, "a number with a fraction or exponent")
    return INVALID_REQUEST, (f'Invalid Request: "id" is {what}; it must be a string or an integer '
                             "(the answer carries id null, as JSON-RPC 2.0 requires)")


def request_id(line: bytes):
    """The top-level id of a line, where it can be read; else None."""
    return top_level(line[:65536] if len(line) > 65536 else line).get("id")


def problem(line: bytes) -> tuple[int, str] | None:
    """(JSON-RPC code, message) when a line must not reach the parser; None when it may."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return PARSE_ERROR, (f"Parse error: the message is not valid UTF-8 (byte 0x{line[e.start]:02x} "
                             f"at offset {e.start}); send UTF-8 JSON")
    depth = nesting_depth(line)
    if depth > MAX_DEPTH:
        # too deep inside `params` is the caller's arguments: Invalid params, as on every transport
        if _deep_member(line) == "params":
            return INVALID_PARAMS, (f"Invalid params: the message nests {depth} levels deep inside params; "
                                    f"at most {MAX_DEPTH} are accepted; send a flatter value")
        return INVALID_REQUEST, (f"Invalid Request: the message nests {depth} levels deep; "
                                 f"at most {MAX_DEPTH} are accepted")
    return None


def _deep_member(line: bytes) -> str | None:
    """The top-level key under which a line first nests past MAX_DEPTH (None: not under a key)."""
    depth = 0
    key = None
    expect_key = False
    for m in _TOKEN_RE.finditer(line):
        tok = m.group()
        if tok in (b"{", b"["):
            depth += 1
            if depth > MAX_DEPTH:
                return key
            expect_key = depth == 1 and tok == b"{"
        elif tok in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and tok == b",":
            expect_key = True
        elif depth == 1 and expect_key and tok.startswith(b'"'):
            key, expect_key = _scalar(tok), False
    return None


def describe_invalid(line: bytes) -> tuple[int, str]:
    """Why a UTF-8, shallow line was still refused by the JSON-RPC parser: (code, message)."""
    try:
        obj = json.loads(line, parse_int=_bounded_int)
    except ValueError as e:
        return PARSE_ERROR, f"Parse error: the line is not JSON ({e})"
    if isinstance(obj, list):
        return INVALID_REQUEST, "batches are not supported; send one message per line"
    where = _find(obj, lambda v: isinstance(v, _BigInt))
    if where is not None:
        return _params_or_request(where, f"{where} is a number with more than {MAX_INT_DIGITS} digits")
    where = _find(obj, _has_surrogate)
    if where is not None:
        return _params_or_request(where, f"{where} holds a lone UTF-16 surrogate (an unpaired "
                                         "\\ud800-\\udfff escape); send valid Unicode")
    if isinstance(obj, dict) and obj.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: a JSON-RPC 2.0 message needs "jsonrpc": "2.0"'
    if isinstance(obj, dict) and "method" in obj and not isinstance(obj["method"], str):
        return INVALID_REQUEST, 'Invalid Request: "method" must be a string'
    if isinstance(obj, dict) and "params" in obj and not isinstance(obj["params"], (dict, list, type(None))):
        return INVALID_REQUEST, 'Invalid Request: "params" must be an object'
    if isinstance(obj, dict) and "id" in obj and (isinstance(obj["id"], bool)
                                                  or not isinstance(obj["id"], (str, int, type(None)))):
        return INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'
    return INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"


class _BigInt(int):
    """Stands in for an integer literal too long for int()."""


def _bounded_int(text: str) -> int:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else _BigInt(0)


def _params_or_request(where: str, what: str) -> tuple[int, str]:
    if where.startswith("params"):
        return INVALID_PARAMS, f"Invalid params: {what}"
    return INVALID_REQUEST, f"Invalid Request: {what}"


def _has_surrogate(v) -> bool:
    return isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v)


def _find(value, bad) -> str | None:
    """The path of the first value (or key) for which `bad` holds, else None; no recursion."""
    stack = [(value, "")]
    while stack:
        v, p = stack.pop()
        if bad(v):
            return p or "the message"
        if isinstance(v, dict):
            for k, item in v.items():
                if bad(k):
                    return f"a key in {p or 'the message'}"
                stack.append((item, f"{p}.{k}" if p else k))
        elif isinstance(v, list):
            stack.extend((item, f"{p}[{i}]") for i, item in enumerate(v))
    return None


def error_line(code: int, message: str, req_id=None) -> bytes:
    """One JSON-RPC error answer, newline-framed."""
    return (json.dumps({"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}) + "\n").encode()


def refusal(line: bytes) -> bytes | None:
    """The error line for a raw message the socket answers before parsing (too deep, not one
    object, an id JSON-RPC does not allow); None to pass it on. HTTP bodies and
    `serve --no-daemon` lines go through the same check, so every transport answers alike."""
    line = line.strip()
    if not line:
        return None
    bad = problem(line)
    if bad is not None:
        return error_line(*bad, request_id(line))
    bad = bad_id(line)
    if bad is not None:
        return error_line(*bad, None)
    return None
