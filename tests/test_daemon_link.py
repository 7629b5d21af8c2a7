"""One daemon connection per HTTP session: the links `brain serve --http` keeps."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    body_of, configured, daemon, http_session, reaper, small_vault, stop_pid,
)
from test_daemon_edges import _slow_llm_daemon
from test_transport_http import _start_http, tokens  # noqa: F401

from brain.daemon.http.daemon_link import DaemonLinks
from brain.daemon.client.spawn import connect_or_start

pytestmark = pytest.mark.usefixtures("reaper")

PRE = {"surface": "full", "lane": "remote", "client": "t", "transport": "http", "client_id": "agent",
       "read_only": False}


def _links(places, vault):
    return DaemonLinks(lambda: connect_or_start(places, vault)[0])


def test_calls_of_one_session_share_one_connection(places, daemon):
    links = _links(places, daemon["vault"])

    async def go():
        for _ in range(5):
            body, err = await links.send("s1", PRE, "whoami", {})
            assert not err and body["client_id"] == "agent"
        assert links.opened == 1
        await links.send("s2", PRE, "whoami", {})
        assert links.opened == 2
        # a changed identity (here: write access withdrawn) never reuses the old connection
        body, _ = await links.send("s1", {**PRE, "read_only": True}, "whoami", {})
        assert body["can_write"] is False and links.opened == 3
        # calls of a new session that arrive together share the one link they open
        answers = []
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(lambda: _append(answers, links.send("s3", PRE, "whoami", {})))
        assert len(answers) == 4 and links.opened == 4
        links.close_all()

    anyio.run(go)


async def _append(out: list, call) -> None:
    out.append(await call)


def test_a_restarted_daemon_is_reached_on_the_next_call(places, daemon, reaper):
    links = _links(places, daemon["vault"])

    async def go():
        assert not (await links.send("s", PRE, "whoami", {}))[1]
        stop_pid(daemon["pid"])
        # the reader saw the close; the next call opens a new link and starts a daemon
        for _ in range(200):
            if not any(link.alive for link in links._links.values()):
                break
            await anyio.sleep(0.02)
        body, err = await links.send("s", PRE, "whoami", {})
        reaper()
        assert not err and body["lane"] == "remote" and links.opened == 2
        links.close_all()

    anyio.run(go)


def test_a_new_identity_lets_the_call_in_flight_finish(places, configured, reaper, monkeypatch):
    """Rescoped while a slow call runs: that call is answered on the old link; the next
    call goes on a new link with the new surface; the old link closes once it is idle."""
    from llm_fakes import FakeLLM

    with FakeLLM() as fake:
        _slow_llm_daemon(places, configured, monkeypatch, fake, delay_s=1.5)
        reaper()
        links = _links(places, configured)
        narrower = {**PRE, "surface": "verbs"}

        async def go():
            slow: list = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(_append, slow, links.send("s", PRE, "synthesize",
                                                        {"question": "Where does Alice Example work?"}))
                while not fake.calls("/chat/completions"):
                    await anyio.sleep(0.02)
                old = links._live(("s", json.dumps(PRE, sort_keys=True)))
                # the new link has the narrower surface: whoami is not one of the verbs
                body, err = await links.send("s", narrower, "whoami", {})
                assert err and body["error"] == "unknown_tool" and links.opened == 2
                assert old.in_flight == 1 and not old.alive  # retired: no new calls, its own still running
            body, err = slow[0]
            assert not err and "Acme" in body["answer"], body
            assert old.in_flight == 0 and old._writer.is_closing()
            links.close_all()

        anyio.run(go)


def test_a_page_larger_than_a_stream_buffer_comes_back_whole(places, daemon):
    links = _links(places, daemon["vault"])
    text = "# Big\n\n" + "".join(f"line {i} of a long page about nothing much\n" for i in range(8000))
    assert len(text) > 256 * 1024

    async def go():
        body, err = await links.send("s", PRE, "put_page", {"slug": "notes/big", "content": text})
        assert not err, body
        body, err = await links.send("s", PRE, "get_page", {"slug": "notes/big"})
        links.close_all()
        return body, err

    body, err = anyio.run(go)
    assert not err and body["content"] == text


def test_a_call_whose_caller_left_leaves_the_link_usable(places, configured, reaper, monkeypatch):
    """An HTTP client that goes away mid-call cancels the wait; the daemon's late answer is
    dropped and the session's next call runs on the same link."""
    from llm_fakes import FakeLLM

    with FakeLLM() as fake:
        _slow_llm_daemon(places, configured, monkeypatch, fake, delay_s=1.0)
        reaper()
        links = _links(places, configured)

        async def go():
            with anyio.move_on_after(0.3):
                await links.send("s", PRE, "synthesize", {"question": "Where does Alice Example work?"})
            link = links._live(("s", json.dumps(PRE, sort_keys=True)))
            assert link.in_flight == 0
            await anyio.sleep(1.5)  # the daemon answers the abandoned call meanwhile
            body, err = await links.send("s", PRE, "whoami", {})
            links.close_all()
            return body, err

        body, err = anyio.run(go)
    assert not err and body["client_id"] == "agent" and links.opened == 1


def _unix_sockets_of(pid: int) -> set[str]:
    """Inodes of the Unix-domain sockets a process holds open (per /proc)."""
    unix = {line.split()[6] for line in Path("/proc/net/unix").read_text().splitlines()[1:]}
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in unix:
            held.add(target[8:-1])
    return held


def test_http_calls_reuse_one_daemon_connection(daemon, tokens):  # noqa: F811
    proc, url = _start_http()
    try:
        async def go():
            async with http_session(url, tokens["writer"]) as s:
                await s.list_tools()  # answered by the HTTP process itself
                base = _unix_sockets_of(proc.pid)
                body_of(await s.call_tool("whoami", {}))
                first = _unix_sockets_of(proc.pid)
                for _ in range(20):
                    assert not (await s.call_tool("recall", {"entity": "people/alice-example"})).is_error
                return base, first, _unix_sockets_of(proc.pid)

        base, first, after = anyio.run(go)
        # the first call opened one daemon connection; it stays open, and the next calls reuse it
        assert len(first - base) == 1 and after == first
    finally:
        stop_pid(proc.pid)
        proc.wait(10)
        proc.stderr.close()
