"""No server path in an answer to a remote caller (daemon/protocol/server_paths.py).

The vault moved away under a running daemon: its `unavailable` names the
vault's folder for the owner, and a remote caller gets the same error
without it.
"""

from __future__ import annotations

import json
import os

import anyio
from daemon_fixtures import configured, daemon, reaper, small_vault, socket_session  # noqa: F401  (fixtures)

from brain.daemon.protocol.server_paths import SHOWN, for_remote, without_paths

REMOTE = {"surface": "full", "lane": "remote", "client": "test"}


def test_a_remote_unavailable_names_no_server_path(daemon, tmp_path):
    vault = daemon["vault"]

    async def go():
        async with socket_session(daemon["socket"], REMOTE) as s:
            first = await s.call_tool("recall", {"query": "anything"})
            os.rename(vault, tmp_path / "moved-away")
            second = await s.call_tool("recall", {"query": "anything"})
            return first, json.loads(second.content[0].text)

    first, body = anyio.run(go)
    assert "error" not in json.loads(first.content[0].text)
    assert body["error"] == "unavailable" and "moved or replaced" in body["message"], body
    text = json.dumps(body)
    assert str(vault) not in text and str(tmp_path) not in text and SHOWN in text, body


def test_paths_go_and_everything_else_stays():
    env = {"error": "internal", "message": "[Errno 2] No such file or directory: '/home/ana/notes/.brain/x'",
           "suggestion": "chmod u+rwx /home/ana/notes, then see https://example.com/docs/a or POST /mcp.",
           "detail": "people/alice and 1/2 and/or", "protocol_version": 1}
    out = for_remote(env)
    assert "/home/ana" not in json.dumps(out)
    assert out["suggestion"] == f"chmod u+rwx {SHOWN}, then see https://example.com/docs/a or POST /mcp."
    assert out["detail"] == env["detail"] and out["protocol_version"] == 1
    assert for_remote({"facts": ["/home/ana/x/y"]}) == {"facts": ["/home/ana/x/y"]}   # answers as they are
    assert without_paths("at /srv/a/b).") == f"at {SHOWN})."
