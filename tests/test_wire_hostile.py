"""Hostile and malformed JSON-RPC on the daemon's socket and through the relay.

Every line gets exactly one answer carrying its id wherever the id can be
read, the answer says what is wrong, and the connection keeps serving.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, INIT, INITIALIZED, call_text, child_env, configured, daemon, raw_connect, reaper, read_until_id,
    send_lines, small_vault, tool_call,
)

pytestmark = pytest.mark.usefixtures("reaper")

REMOTE = {"surface": "full", "lane": "remote", "client": "test"}


def _call(req_id, name: str, raw_args: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":'
            % (req_id, name.encode())) + raw_args + b"}}\n"


def _session(daemon):
    s = raw_connect(daemon["socket"], REMOTE, timeout=20)
    send_lines(s, INIT, INITIALIZED)
    read_until_id(s, 1)
    return s


def test_unparseable_lines_are_answered_with_their_id(daemon):
    s = _session(daemon)
    # an integer Python cannot read, a raw 0xFF byte, nesting past the parser's limits
    s.sendall(_call(5, "recall", b'{"limit":' + b"1" * 5000 + b"}"))
    big = read_until_id(s, 5)["error"]
    assert big["code"] == -32602 and "4300 digits" in big["message"] and "limit" in big["message"]
    s.sendall(_call(6, "recall", b'{"grep":"\xff"}'))
    bad = read_until_id(s, 6)["error"]
    assert bad["code"] == -32700 and "UTF-8" in bad["message"]
    for depth, rid in ((300, 7), (1100, 8)):
        s.sendall(_call(rid, "recall", b'{"x":' + b"[" * depth + b"]" * depth + b"}"))
        deep = read_until_id(s, rid)["error"]
        assert deep["code"] == -32602 and "levels deep" in deep["message"]
    s.sendall(_call(9, "recall", b'{"grep":"\\ud800"}'))
    lone = read_until_id(s, 9)["error"]
    assert "surrogate" in lone["message"] and "params.arguments.grep" in lone["message"]
    # an id after a deep nested member is still found (it is read from the raw bytes)
    s.sendall(b'{"jsonrpc":"2.0","method":"tools/call","params":{"a":' + b"[" * 500 + b"]" * 500 + b'},"id":"late"}\n')
    assert read_until_id(s, "late")["error"]["code"] == -32602
    send_lines(s, tool_call(10, "whoami", {}))
    assert call_text(read_until_id(s, 10))["lane"] == "remote"
    s.close()


def test_non_object_arguments_say_what_is_wrong(daemon):
    s = _session(daemon)
    for rid, raw, kind in ((11, b"[1,2]", "array"), (12, b'"x"', "string"), (13, b"7", "number")):
        s.sendall(_call(rid, "recall", raw))
        err = read_until_id(s, rid)["error"]
        assert err["code"] == -32602
        assert "arguments" in err["message"] and "object" in err["message"] and kind in err["message"], err
    s.close()


def test_huge_numbers_are_invalid_params_never_internal(daemon):
    s = _session(daemon)
    cases = [("recall", b'{"limit":1' + b"0" * 309 + b"}"), ("recall", b'{"limit":1e309}'),
             ("search", b'{"query":"acme","limit":1' + b"0" * 309 + b"}"),
             ("recall", b'{"budget_tokens":-1' + b"0" * 400 + b"}"),
             ("context_pack", b'{"entities":"people/bob","budget_tokens":1e400}')]
    for rid, (name, raw) in enumerate(cases, 20):
        s.sendall(_call(rid, name, raw))
        body = call_text(read_until_id(s, rid))
        assert body["error"] == "invalid_params", (name, raw[:40], body)
    s.close()


def test_an_overlong_line_is_answered_with_its_id(daemon):
    from brain.daemon.server.socket import MAX_LINE_BYTES

    s = _session(daemon)
    head = b'{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"remember","arguments":{"fact":"'
    s.sendall(head)
    chunk = b"x" * (1 << 20)
    for _ in range(MAX_LINE_BYTES // len(chunk) + 1):
        s.sendall(chunk)
    s.sendall(b'","provenance":"p"}}}\n')
    err = read_until_id(s, "huge")["error"]
    assert err["code"] == -32600 and "longer than" in err["message"]
    send_lines(s, tool_call(2, "whoami", {}))
    assert call_text(read_until_id(s, 2))["lane"] == "remote"
    s.close()


def _relay():
    return subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env())


def _relay_read(proc, want):
    while True:
        line = proc.stdout.readline()
        assert line, f"the relay exited (rc={proc.poll()}): {proc.stderr.read().decode()[-2000:]}"
        msg = json.loads(line)
        if msg.get("id") == want:
            return msg


def test_the_relay_survives_deep_nesting_and_large_messages(daemon):
    proc = _relay()
    try:
        proc.stdin.write(json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n")
        proc.stdin.flush()
        _relay_read(proc, 1)
        proc.stdin.write(_call(2, "recall", b'{"x":' + b"[" * 1100 + b"]" * 1100 + b"}"))
        proc.stdin.flush()
        assert _relay_read(proc, 2)["error"]["code"] == -32602
        # a message well past 64 KB: answered, and the connection stays
        page = "# Big\n\n" + "word " * 40000
        proc.stdin.write(json.dumps(tool_call(3, "put_page", {"slug": "notes/big", "content": page})).encode() + b"\n")
        proc.stdin.flush()
        assert call_text(_relay_read(proc, 3))["slug"] == "notes/big"
        proc.stdin.write(json.dumps(tool_call(4, "whoami", {})).encode() + b"\n")
        proc.stdin.flush()
        assert call_text(_relay_read(proc, 4))["transport"] == "stdio"
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
    assert "daemon stopped" not in err
