"""Judging one conformance case's answer: placeholders, paths, predicates.

Pure functions over decoded JSON, kept apart from the MCP plumbing in
`runner.py` so every rule here is testable without a server. The case
format is described in `runner.py`.
"""

from __future__ import annotations

import json
import re

from ..protocol.shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS, json_type, validate


class _Missing:
    """A path that leads nowhere (JavaScript's `undefined`)."""

    def __repr__(self) -> str:
        return "missing"


MISSING = _Missing()

_ID_PLACEHOLDER = re.compile(r"\{\{id:([a-z0-9_-]+)\}\}", re.IGNORECASE)


def substitute(value, marker: str, saved: dict[str, str]):
    """Replace `{{marker}}` and `{{id:key}}` in every string inside `value`."""
    if isinstance(value, str):
        out = value.replace("{{marker}}", marker)
        return _ID_PLACEHOLDER.sub(lambda m: saved.get(m.group(1).lower(), f"MISSING-ID-{m.group(1)}"), out)
    if isinstance(value, list):
        return [substitute(v, marker, saved) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, marker, saved) for k, v in value.items()}
    return value


def get_path(body, path: str):
    """Follow a dotted path; numeric segments index arrays, `length` sizes them."""
    if not path:
        return body
    cur = body
    for seg in path.split("."):
        if isinstance(cur, dict):
            cur = cur.get(seg, MISSING)
        elif isinstance(cur, (list, str)) and seg == "length":
            cur = len(cur)
        elif isinstance(cur, list) and seg.isdigit():
            i = int(seg)
            cur = cur[i] if i < len(cur) else MISSING
        else:
            return MISSING
        if cur is MISSING:
            return MISSING
    return cur


def show(value) -> str:
    if value is MISSING:
        return "missing"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_number(v) -> bool:
    return v is not MISSING and json_type(v) in ("integer", "number")


def strict_equal(a, b) -> bool:
    """JSON equality without Python's `True == 1` and `1 == 1.0`-is-bool blur."""
    if a is MISSING or b is MISSING:
        return a is b
    if _is_number(a) and _is_number(b):
        return a == b
    if json_type(a) != json_type(b):
        return False
    if isinstance(a, (dict, list)):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    return a == b


def _serialized(value) -> str:
    return json.dumps(value, ensure_ascii=False)


PREDICATES = ("equals", "oneOf", "type", "gte", "lte", "nonEmptyString", "absentOrNotContains",
              "contains", "absent", "equalsPath", "ltePath")


def check_expectation(body, exp: dict) -> str | None:
    """One `expect` entry; a problem line, or None when it holds."""
    path = exp.get("path", "")
    label = path or "(response)"
    v = get_path(body, path)
    if "equals" in exp:
        if not strict_equal(v, exp["equals"]):
            return f"{label}: expected {show(exp['equals'])}, got {show(v)}"
    elif "oneOf" in exp:
        if not any(strict_equal(v, o) for o in exp["oneOf"]):
            return f"{label}: expected one of {show(exp['oneOf'])}, got {show(v)}"
    elif "type" in exp:
        want = exp["type"]
        got = "missing" if v is MISSING else json_type(v)
        ok = got == want or (want == "number" and got == "integer")
        if not ok:
            return f"{label}: expected {want}, got {got}"
    elif "gte" in exp or "lte" in exp:
        op, bound = ("gte", exp["gte"]) if "gte" in exp else ("lte", exp["lte"])
        if not _is_number(v):
            return f"{label}: expected a number, got {show(v)}"
        if (op == "gte" and v < bound) or (op == "lte" and v > bound):
            return f"{label}: expected {'≥' if op == 'gte' else '≤'} {bound}, got {show(v)}"
    elif "nonEmptyString" in exp:
        if not (isinstance(v, str) and v.strip()):
            return f"{label}: expected a non-empty string, got {show(v)}"
    elif "absentOrNotContains" in exp:
        needle = exp["absentOrNotContains"]
        if v is not MISSING and needle in _serialized(v):
            return f"{label}: must not contain {show(needle)}"
    elif "contains" in exp:
        needle = exp["contains"]
        if v is MISSING or needle not in _serialized(v):
            return f"{label}: expected to contain {show(needle)}, got {show(v)}"
    elif "absent" in exp:
        if exp["absent"] and v is not MISSING:
            return f"{label}: expected absent, got {show(v)}"
    elif "equalsPath" in exp:
        other = get_path(body, exp["equalsPath"])
        if not strict_equal(v, other):
            return f"{label}: expected {exp['equalsPath']} ({show(other)}), got {show(v)}"
    elif "ltePath" in exp:
        other = get_path(body, exp["ltePath"])
        if not (_is_number(v) and _is_number(other) and v <= other):
            return f"{label}: expected ≤ {exp['ltePath']} ({show(other)}), got {show(v)}"
    else:
        return f"{label}: the case names no known predicate ({', '.join(PREDICATES)})"
    return None


def judge(case: dict, body, is_error: bool, saved: dict[str, str]) -> list[str]:
    """Every problem with one answer to one (already substituted) case.

    Records `saveAs` ids into `saved` as a side effect.
    """
    verb = case.get("verb")
    code = case.get("expectErrorCode")
    problems: list[str] = []
    if verb == "synthesize" and not code:
        # costs money and needs a provider: a clean `unavailable` with a fix passes too
        if is_error:
            err = body.get("error") if isinstance(body, dict) else None
            if err != "unavailable":
                problems.append(f"error: expected a success or \"unavailable\", got {show(err)}")
            if not (isinstance(body, dict) and isinstance(body.get("suggestion"), str) and body["suggestion"].strip()):
                problems.append("suggestion: expected a non-empty string")
            problems += validate(body, ERROR_SCHEMA)
        else:
            problems += validate(body, RESPONSE_SCHEMAS["synthesize"])
        return problems
    if code:
        if not is_error:
            return [f"expected error {code!r}, got a success: {show(body)}"]
        err = body.get("error", MISSING) if isinstance(body, dict) else MISSING
        if err != code:
            problems.append(f"error: expected {show(code)}, got {show(err)}")
        if case.get("expectSuggestion"):
            sug = body.get("suggestion", MISSING) if isinstance(body, dict) else MISSING
            if not (isinstance(sug, str) and sug.strip()):
                problems.append(f"suggestion: expected a non-empty string, got {show(sug)}")
        if case.get("validateSchema"):
            problems += validate(body, ERROR_SCHEMA)
    else:
        if is_error:
            err = body.get("error") if isinstance(body, dict) else None
            msg = body.get("message") if isinstance(body, dict) else None
            return [f"unexpected error {show(err)}: {msg if msg is not None else show(body)}"]
        if case.get("validateSchema") and verb in RESPONSE_SCHEMAS:
            problems += validate(body, RESPONSE_SCHEMAS[verb])
    for exp in case.get("expect", ()):
        problem = check_expectation(body, exp)
        if problem:
            problems.append(problem)
    save = case.get("saveAs")
    if save and not is_error:
        v = get_path(body, save["path"])
        if isinstance(v, str):
            saved[save["key"].lower()] = v
        else:
            problems.append(f"saveAs {save['key']}: {save['path']} is not a string (got {show(v)})")
    return problems
