"""The MEMORY_VERBS v1 conformance runner: certify any memory server.

It connects with the official MCP SDK client — stdio for a command, the
Streamable HTTP client (with `Authorization: Bearer`) for an http(s) URL —
and then:

1. picks a marker `run-<base36 milliseconds>`; everything the run writes is
   named after it (the seeded page `people/conformance-<marker>`, fact texts,
   a delta session id), and nothing else is touched;
2. lists the tools: one row per verb (the five core verbs must be there,
   context_pack and delta may be absent and are then skipped), one row for
   synthesize's `[EXPENSIVE` description, one for the absence of
   outputSchema, one for the required parameters each verb declares;
3. seeds the marker entity page with `put_page` when the target offers it
   (otherwise the cases that need it skip, honestly);
4. runs the cases of `cases.json` in order, each pass, fail or
   skip with a one-line detail; the server is conformant when none fails.

Case file format (docs/protocol.md §5.3), a JSON array of objects:
  name, verb, params                 the call; strings in params and in expect
                                     values may use {{marker}} and {{id:<key>}}
                                     (a key never saved becomes MISSING-ID-<key>)
  validateSchema                     check the answer against the verb's
                                     response schema (shapes.py)
  expectErrorCode, expectSuggestion  the call must answer this error envelope
                                     (with a non-blank suggestion)
  expect                             [{path, <predicate>}]; dotted paths,
                                     numeric segments index arrays
  saveAs                             {key, path}: remember a string id
  requiresSeededEntity               skip unless put_page seeded the page
  requiresSynthesizeFlag             skip unless --synthesize (costs money)
  beyondProtocol                     our own stricter case, not required by
                                     the protocol (docs/protocol.md §9): a
                                     failure is a fail against brain and an
                                     `info` row against any other server
Predicates: equals, oneOf, type, gte, lte, nonEmptyString, absentOrNotContains.

Extensions of ours (a reference runner ignores them):
  tool              call this tool name instead of a verb (for the
                    unknown_tool envelope on a name no server offers)
  validateSchema    on an expectErrorCode case: also check the envelope
                    against ERROR_SCHEMA (protocol_version 1, no null keys)
  expect            also evaluated on error answers
  path              "" is the whole answer; `length` sizes an array or string
  predicates        contains (the JSON of the value contains a substring),
                    absent (the path leads nowhere), equalsPath / ltePath
                    (compare with the value at another path)
"""

from __future__ import annotations

import json
import time
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from .expect import judge, substitute
from ..protocol.version import PROTOCOL_VERSION
from ..protocol.registry import CORE, OPTIONAL
from ..protocol.tools import VERB_NAMES, VERBS

CASES_FILE = Path(__file__).with_name("cases.json")
# what the runner expects of a server's tools/list, from our own declarations
CORE_VERBS = tuple(t.name for t in VERBS if t.verb == CORE)
ADDITIVE_VERBS = tuple(t.name for t in VERBS if t.verb == OPTIONAL)
PROTOCOL_REQUIRED = {t.name: sorted(p.name for p in t.params if p.required) for t in VERBS}
CLIENT_NAME = "brain-conformance"
OUR_SERVER_NAME = "brain"  # the serverInfo name our MCP server announces
CALL_TIMEOUT_S = 60.0
SYNTHESIZE_TIMEOUT_S = 300.0

SEED_TEMPLATE = """---
title: Conformance {marker}
type: person
---
# Conformance {marker}

Synthetic entity for a MEMORY_VERBS conformance run.
"""


@dataclass
class Row:
    name: str
    verb: str
    status: str  # pass | fail | skip | info
    detail: str = ""


def new_marker(now_ms: int | None = None) -> str:
    """`run-` and the current time in milliseconds, base 36."""
    n = int(time.time() * 1000) if now_ms is None else now_ms
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return "run-" + out


def load_cases(path: Path | None = None) -> list[dict]:
    """The case list (our packaged file unless another is given)."""
    cases = json.loads(Path(path or CASES_FILE).read_text(encoding="utf-8"))
    if not isinstance(cases, list) or not all(isinstance(c, dict) and "name" in c for c in cases):
        raise ValueError(f"{path or CASES_FILE}: expected a JSON array of case objects with a name")
    return cases


# -- connecting -------------------------------------------------------------

def _client(transport):
    from mcp import Client
    from mcp_types import Implementation

    from ... import __version__ as version

    return Client(transport, mode="legacy", cache=None, read_timeout_seconds=CALL_TIMEOUT_S,
                  client_info=Implementation(name=CLIENT_NAME, version=version))


@asynccontextmanager
async def connect_stdio(argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
                        errlog: TextIO | None = None):
    """An MCP client session to a server spawned as `argv` over stdio."""
    import sys

    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=env, cwd=cwd)
    async with _client(stdio_client(params, errlog=errlog or sys.stderr)) as client:
        yield client


@asynccontextmanager
async def connect_http(url: str, token: str | None = None):
    """An MCP client session to a Streamable HTTP endpoint, with a bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    refused: list[int] = []

    async def note_status(response) -> None:
        # the SDK reports any non-2xx as a bare "error response"; keep the status to explain it
        if response.status_code >= 400:
            refused.append(response.status_code)

    entered = False
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                  event_hooks={"response": [note_status]}) as http:
        try:
            async with _client(streamable_http_client(url, http_client=http)) as client:
                entered = True
                yield client
        except Exception as e:
            if entered or not refused:
                raise
            status = refused[-1]
            hint = {401: " — the server wants a valid bearer token: pass --token",
                    403: " — the token is not allowed here",
                    404: " — no MCP endpoint at this URL (brain serves it at /mcp)"}.get(status, "")
            raise ConnectionError(f"HTTP {status} from {url}{hint}") from e


class _Alternating:
    """Two front ends of one brain as one client: tools/list from the first, and each
    tools/call on the next in turn, so what one call writes the next reads elsewhere."""

    def __init__(self, clients: list):
        self.clients = clients
        self.server_info = getattr(clients[0], "server_info", None)
        self._turn = 0

    async def list_tools(self):
        return await self.clients[0].list_tools()

    async def call_tool(self, *args, **kwargs):
        client = self.clients[self._turn % len(self.clients)]
        self._turn += 1
        return await client.call_tool(*args, **kwargs)


@asynccontextmanager
async def connect_alternating(*connects):
    """One client over several connections (`connect_http(...)` each), calls taking turns."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(connect()) for connect in connects]
        yield _Alternating(clients)


# -- one run ------------------------------------------------------------------

def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping task-group wrappers."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _call(client, name: str, args: dict, timeout: float) -> tuple[str, bool]:
    """(the text blocks joined by newlines, isError) of one tools/call."""
    result = await client.call_tool(name, args, read_timeout_seconds=timeout)
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return "\n".join(texts), bool(result.is_error)


def _list_rows(tools: dict[str, dict]) -> list[Row]:
    rows = []
    for verb in VERB_NAMES:
        if verb in tools:
            rows.append(Row(f"tools/list advertises {verb}", verb, "pass"))
        elif verb in CORE_VERBS:
            rows.append(Row(f"tools/list advertises {verb}", verb, "fail", "not advertised"))
        else:
            rows.append(Row(f"tools/list advertises {verb}", verb, "skip", "optional verb not advertised"))
    desc = (tools.get("synthesize") or {}).get("description") or ""
    expensive = desc.startswith("[EXPENSIVE")
    why = "" if expensive else (f"description starts {desc[:40]!r}" if "synthesize" in tools
                                else "synthesize not advertised")
    rows.append(Row("synthesize is marked expensive ([EXPENSIVE prefix)", "synthesize",
                    "pass" if expensive else "fail", why))
    with_output = sorted(n for n in VERB_NAMES if n in tools and tools[n].get("outputSchema"))
    rows.append(Row("no verb declares an outputSchema", "tools/list", "fail" if with_output else "pass",
                    f"declared by {', '.join(with_output)}" if with_output else ""))
    wrong = []
    for verb in VERB_NAMES:
        if verb in tools:
            req = sorted((tools[verb].get("inputSchema") or {}).get("required") or [])
            want = PROTOCOL_REQUIRED[verb]
            if req != want:
                wrong.append(f"{verb} requires {req or 'nothing'}, the protocol {want or 'nothing'}")
    rows.append(Row("verbs require exactly the protocol's parameters", "tools/list",
                    "fail" if wrong else "pass", "; ".join(wrong)))
    return rows


def _is_ours(client) -> bool:
    """Whether the target announced itself as brain (then our stricter cases bind)."""
    info = getattr(client, "server_info", None)
    return getattr(info, "name", None) == OUR_SERVER_NAME


async def _run(client, cases: list[dict], marker: str, synthesize: bool, rows: list[Row]) -> None:
    strict = _is_ours(client)
    try:
        listing = await client.list_tools()
        tools = {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in listing.tools}
        rows.extend(_list_rows(tools))
    except Exception as e:
        tools = {}
        rows.append(Row("tools/list", "tools/list", "fail", f"transport: {_describe(e)}"))

    seeded, unseeded_why = False, "no seeded entity (the target has no put_page)"
    if "put_page" in tools or not tools:
        try:
            text, is_error = await _call(client, "put_page", {"slug": f"people/conformance-{marker}",
                                                             "content": SEED_TEMPLATE.format(marker=marker)},
                                         CALL_TIMEOUT_S)
            seeded = not is_error
            if is_error:
                unseeded_why = f"no seeded entity (put_page answered an error: {' '.join(text[:100].split())})"
        except Exception as e:
            unseeded_why = f"no seeded entity (put_page failed: {_describe(e)})"

    saved: dict[str, str] = {}
    for case in cases:
        name = case["name"]
        tool = substitute(case.get("tool") or case.get("verb", ""), marker, saved)
        if case.get("requiresSynthesizeFlag") and not synthesize:
            rows.append(Row(name, tool, "skip", "needs --synthesize (it costs money)"))
            continue
        if tool in ADDITIVE_VERBS and tools and tool not in tools:
            rows.append(Row(name, tool, "skip", f"{tool} not advertised (optional verb)"))
            continue
        if case.get("requiresSeededEntity") and not seeded:
            rows.append(Row(name, tool, "skip", unseeded_why))
            continue
        case = dict(case, params=substitute(case.get("params", {}), marker, saved),
                    expect=substitute(case.get("expect", []), marker, saved))
        timeout = SYNTHESIZE_TIMEOUT_S if tool == "synthesize" else CALL_TIMEOUT_S
        try:
            text, is_error = await _call(client, tool, case["params"], timeout)
        except Exception as e:
            rows.append(Row(name, tool, "fail", f"transport: {_describe(e)}"))
            continue
        try:
            body = json.loads(text)
        except ValueError:
            rows.append(Row(name, tool, "fail", "response not JSON: " + text[:120].replace("\n", "\\n")))
            continue
        problems = judge(case, body, is_error, saved)
        if problems and case.get("beyondProtocol") and not strict:
            rows.append(Row(name, tool, "info", "not required by the protocol: " + "; ".join(problems)))
            continue
        rows.append(Row(name, tool, "fail" if problems else "pass", "; ".join(problems)))


def make_report(rows: list[Row]) -> dict:
    """`{protocol_version, results[], passed, failed, skipped, informational, ok}`.

    `informational` counts our stricter cases another server did not meet;
    they never make a server non-conformant."""
    def count(status):
        return sum(r.status == status for r in rows)

    failed = count("fail")
    return {"protocol_version": PROTOCOL_VERSION, "results": [asdict(r) for r in rows],
            "passed": count("pass"), "failed": failed, "skipped": count("skip"),
            "informational": count("info"), "ok": failed == 0}


async def certify(connect, *, synthesize: bool = False, cases: list[dict] | None = None,
                  marker: str | None = None) -> dict:
    """Run the whole sequence over `connect()` (an async context manager
    yielding an MCP client) and return the report."""
    marker = marker or new_marker()
    cases = load_cases() if cases is None else cases
    rows: list[Row] = []
    entered = False
    try:
        async with connect() as client:
            entered = True
            await _run(client, cases, marker, synthesize, rows)
    except Exception as e:
        if not entered:
            rows.append(Row("connect", "initialize", "fail", f"could not connect: {_describe(e)}"))
        else:  # the server broke the connection; what ran so far still counts
            rows.append(Row("connection", "transport", "fail", f"transport: {_describe(e)}"))
    return make_report(rows)


def render_text(report: dict, target_label: str, marker: str | None = None) -> str:
    """The human report: one line per row, the tally, the verdict."""
    marks = {"pass": "✓", "skip": "−", "fail": "✗", "info": "i"}
    lines = [f"MEMORY_VERBS v{report['protocol_version']} conformance — target: {target_label}"]
    if marker:
        lines.append(f"marker: {marker} (the run wrote only artifacts named after it)")
    for r in report["results"]:
        lines.append(f"  {marks[r['status']]} {r['name']}" + (f" — {r['detail']}" if r["detail"] else ""))
    lines.append("")
    tally = f"{report['passed']} passed, {report['failed']} failed, {report['skipped']} skipped"
    if report.get("informational"):
        tally += f" ({report['informational']} informational: stricter than the protocol requires)"
    lines.append(tally)
    lines.append("CONFORMANT" if report["ok"] else "NOT CONFORMANT")
    return "\n".join(lines)
