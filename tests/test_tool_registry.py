"""One declaration makes a tool: registered here, it is listed over MCP, dispatched,
refused without write scope, hidden from surfaces it is not on, documented by
`brain protocol` and described in CLI help; unregistered, it is gone from all of
them (docs/protocol.md §1.4, §2, §7)."""

import json

import anyio
import pytest

from brain.cli.verb_commands import Command, Opt
from brain.daemon.protocol.document import build_document, render_text
from brain.daemon.protocol.registry import ToolDef, Param
from brain.daemon.protocol.tools import ALL_TOOLS, REGISTRY
from brain.daemon.protocol.caller import Caller
from brain.daemon.server.mcp import build_server, engine_dispatcher, fixed_caller

NAME = "note_echo"
calls: list[dict] = []


def note_echo(engine, args, caller):
    calls.append(args)
    return {"echo": args["text"], "vault": engine.vault.name, "protocol_version": 1}


NOTE_ECHO = ToolDef(
    NAME,
    "Echo a note back (a tool that exists only in this test).",
    (Param("text", "string", "What to echo.", required=True),),
    {"title": "note_echo", "idempotentHint": True},
    handler=f"{__name__}:note_echo",
    writes=True,
    surface="starter",
)


@pytest.fixture
def note_echo_tool():
    calls.clear()
    with REGISTRY.registered(NOTE_ECHO) as tool:
        yield tool
    assert NAME not in REGISTRY and NAME not in ALL_TOOLS


def over_mcp(engine, caller: Caller, *requests):
    """Run (method, name, args) requests through an in-process MCP server and SDK client."""
    from mcp import Client

    server = build_server(engine_dispatcher(engine), fixed_caller(caller))

    async def go():
        out = []
        async with Client(server, mode="legacy", cache=None) as client:
            for method, name, args in requests:
                if method == "list":
                    out.append([t.name for t in (await client.list_tools()).tools])
                else:
                    result = await client.call_tool(name, args)
                    out.append((json.loads(result.content[0].text), bool(result.is_error)))
        return out

    return anyio.run(go)


def test_a_registered_tool_is_listed_and_dispatched_over_mcp(engine, note_echo_tool):
    writer = Caller(remote=True, transport="test", surface="full", can_write=True)
    listed, (body, is_error) = over_mcp(engine, writer, ("list", None, None), ("call", NAME, {"text": "hi"}))
    assert listed[-1] == NAME and "recall" in listed
    assert not is_error and body == {"echo": "hi", "vault": engine.vault.name, "protocol_version": 1}
    assert calls == [{"text": "hi"}]
    # the declared schema validates its arguments like any verb's
    (bad, bad_error), = over_mcp(engine, writer, ("call", NAME, {}))
    assert bad_error and bad["error"] == "invalid_params" and "text" in bad["message"]


def test_a_write_tool_is_refused_to_a_read_only_caller(engine, note_echo_tool):
    reader = Caller(remote=True, transport="test", surface="full", can_write=False)
    (body, is_error), = over_mcp(engine, reader, ("call", NAME, {"text": "hi"}))
    assert is_error and body["error"] == "scope_denied" and NAME in body["message"]
    assert calls == []


def test_a_tool_is_absent_from_a_surface_it_is_not_on(engine, note_echo_tool):
    verbs_only = Caller(remote=True, transport="test", surface="verbs")
    listed, (body, is_error) = over_mcp(engine, verbs_only, ("list", None, None), ("call", NAME, {"text": "hi"}))
    assert NAME not in listed
    assert is_error and body == {"error": "unknown_tool", "message": f"Unknown tool: {NAME}"}
    starter = Caller(remote=True, transport="test", surface="starter")
    (listed,) = over_mcp(engine, starter, ("list", None, None))
    assert NAME in listed
    assert calls == []


def test_a_registered_tool_is_in_the_protocol_document_and_cli_help(note_echo_tool):
    doc = build_document()
    entry = doc["tools"][NAME]
    assert entry["input_schema"] == NOTE_ECHO.input_schema()
    assert entry["surfaces"] == ["starter", "full"] and entry["writes"] is True
    assert NAME not in doc["verbs"]
    assert f"  {NAME}(text) [starter, full; writes]" in render_text(doc)
    cmd = Command("echo", NAME, (Opt(("TEXT",), "text"),))
    assert cmd.help_of(cmd.opts[0]) == "What to echo."


def test_an_unregistered_tool_is_gone_everywhere(engine):
    with REGISTRY.registered(NOTE_ECHO):
        (listed,) = over_mcp(engine, Caller(remote=True, transport="test"), ("list", None, None))
        assert NAME in listed
    full = Caller(remote=True, transport="test")
    listed, (body, is_error) = over_mcp(engine, full, ("list", None, None), ("call", NAME, {"text": "hi"}))
    assert NAME not in listed and is_error and body["error"] == "unknown_tool"
    assert NAME not in build_document()["tools"]


def test_the_handler_is_imported_on_the_first_call_only(engine):
    lazy = ToolDef("lazy_tool", "Its module does not exist.", (), handler="brain_no_such_module:fn", surface="full")
    with REGISTRY.registered(lazy):
        (listed,) = over_mcp(engine, Caller(remote=True, transport="test"), ("list", None, None))
        assert "lazy_tool" in listed and "lazy_tool" in build_document()["tools"]
        (body, is_error), = over_mcp(engine, Caller(remote=True, transport="test"), ("call", "lazy_tool", {}))
        assert is_error and body["error"] == "internal"


def test_a_declaration_must_be_whole_and_unique():
    with pytest.raises(ValueError, match="already registered"):
        REGISTRY.register(ALL_TOOLS["recall"])
    for broken in (ToolDef("x", "", (), handler="m:f", surface="wide"), ToolDef("x", "", (), handler="m"),
                   ToolDef("x", "", (), handler="m:f", verb="maybe")):
        with pytest.raises(ValueError):
            REGISTRY.register(broken)
    assert "x" not in REGISTRY


def test_a_slow_tool_is_declared_so_and_only_synthesize_is():
    from brain.daemon.protocol.tools import REGISTRY

    assert [t.name for t in REGISTRY if t.slow] == ["synthesize"]
