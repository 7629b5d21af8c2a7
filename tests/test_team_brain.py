"""A team brain on one PostgreSQL: the one indexer, two stateless front ends, and what
happens when one dies (docs/scaling.md, "A team brain on PostgreSQL").

Everything here is real: the server from the `postgres` extra (pg_fixtures),
`brain index --store`, `brain auth token create --store` and two `brain serve
--http --store` processes, spoken to with the MCP SDK over HTTP.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from daemon_fixtures import BRAIN, body_of, child_env, http_session, stop_pid, write_vault
from pg_fixtures import pg_dsn, pg_server  # noqa: F401  (fixtures)


def _url(dsn: str) -> str:
    """The key=value DSN of the test server as a postgresql:// URL (what `--store` takes)."""
    kv = dict(part.split("=", 1) for part in dsn.split())
    return (f"postgresql://{kv['user']}@/{kv['dbname']}?host={quote(kv['host'], safe='')}"
            f"&port={kv.get('port', '5432')}")


@pytest.fixture
def team(tmp_path, pg_dsn):  # noqa: F811
    """A vault, a store loaded from it by the indexer, and a write token of the store."""
    vault = write_vault(tmp_path / "vault")
    home = tmp_path / "home"
    home.mkdir()
    env = {**child_env(), "BRAIN_HOME": str(home), "BRAIN_VAULT": str(vault)}
    (home / "config.toml").write_text('embeddings.enabled = false\nprotocol_installed_at = '
                                      '"2026-01-01T00:00:00.000Z"\n')
    store = _url(pg_dsn)
    indexed = subprocess.run([BRAIN, "index", "--store", store, "--quiet", "--json"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert indexed.returncode == 0, indexed.stderr
    token = subprocess.run([BRAIN, "auth", "token", "create", "team-agent", "--write", "--store", store],
                           capture_output=True, text=True, env=env, timeout=60)
    assert token.returncode == 0, token.stderr
    return {"vault": vault, "env": env, "store": store, "token": token.stdout.strip(), "home": home}


def _drain(stream) -> None:
    try:
        for _ in stream:
            pass
    except (OSError, ValueError):   # closed under us: the process is being stopped
        pass


def _front_end(team) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--port", "0", "--store", team["store"]],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=team["env"], text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"MCP on (http://\S+/mcp)", line)
        if m:
            # keep reading what it writes: a full pipe would stop the server at its next log line
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return proc, m.group(1)
        if len(lines) > 20:
            break
    proc.kill()
    raise AssertionError("the front end did not start: " + "".join(lines))


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


async def _call(url: str, token: str, name: str, args: dict) -> dict:
    async with http_session(url, token) as s:
        return body_of(await s.call_tool(name, args))


def test_a_fact_remembered_through_one_front_end_is_recalled_through_the_other(team):
    a, url_a = _front_end(team)
    b, url_b = _front_end(team)
    try:
        saved = anyio.run(_call, url_a, team["token"], "remember",
                          {"fact": "Alice Example prefers tea over coffee", "entity": "Alice Example", "provenance": "team-test"})
        assert saved.get("id"), saved
        got = anyio.run(_call, url_b, team["token"], "recall", {"entity": "Alice Example"})
        assert any(str(f["id"]) == str(saved["id"]) for f in got["facts"]), (saved, got)
        # the pages came from the indexer: the entity resolves to the vault's page on either front end
        entity = anyio.run(_call, url_b, team["token"], "entity", {"name": "Alice Example"})
        assert entity["found"] and entity["card"]["entity"]["slug"] == "people/alice-example", entity
        assert entity["card"]["active_fact_count"] == 1   # the fact saved through the other front end
        # a private page of the vault is never served to a remote caller
        hits = anyio.run(_call, url_a, team["token"], "recall", {"query": "Alice Acme Secret Person"})
        assert hits["results"] and all("secret" not in json.dumps(h).lower() for h in hits["results"]), hits
    finally:
        _stop(a)
        _stop(b)
    # the indexer writes what the front ends saved into the vault's facts log, with the store's id
    again = subprocess.run([BRAIN, "index", "--store", team["store"], "--quiet", "--json", "--keyword-only"],
                           capture_output=True, text=True, env=team["env"], timeout=120)
    assert again.returncode == 0, again.stderr
    lines = [json.loads(line) for p in (team["vault"] / ".brain" / "facts").glob("*.jsonl")
             for line in p.read_text().splitlines() if line.strip()]
    assert any(r.get("op") == "insert" and str(r.get("id")) == str(saved["id"]) for r in lines), lines


def test_killing_one_front_end_loses_no_acknowledged_fact(team):
    a, url_a = _front_end(team)
    b, url_b = _front_end(team)
    acked: list[int] = []
    try:
        for i in range(5):
            body = anyio.run(_call, url_a, team["token"], "remember",
                             {"fact": f"deploy number {i} of the billing service went out", "entity": "Acme", "provenance": "team-test"})
            acked.append(str(body["id"]))
        os.kill(a.pid, signal.SIGKILL)
        a.wait(10)
        # the other front end keeps answering, with every acknowledged fact
        got = anyio.run(_call, url_b, team["token"], "recall", {"entity": "Acme", "limit": 50})
        assert set(acked) <= {str(f["id"]) for f in got["facts"]}, got
        # a restarted front end serves at once
        started = time.monotonic()
        c, url_c = _front_end(team)
        try:
            got = anyio.run(_call, url_c, team["token"], "recall", {"entity": "Acme", "limit": 50})
            assert set(acked) <= {str(f["id"]) for f in got["facts"]}
            assert time.monotonic() - started < 30
        finally:
            _stop(c)
    finally:
        a.stderr.close()
        _stop(b)


def test_a_front_end_refuses_a_token_of_another_store_and_names_the_missing_extra(team, tmp_path):
    a, url_a = _front_end(team)
    try:
        import httpx2 as httpx

        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        heads = {"Accept": "application/json, text/event-stream"}
        refused = httpx.post(url_a, json=hello, headers={**heads, "Authorization": "Bearer brain_not-this-stores"})
        assert refused.status_code == 401, refused.text
        # the store's own token is taken: the refusal was the token, not the front end
        taken = httpx.post(url_a, json=hello, headers={**heads, "Authorization": f"Bearer {team['token']}"})
        assert taken.status_code == 200, taken.text
    finally:
        _stop(a)
    bad = subprocess.run([BRAIN, "serve", "--store", team["store"]], capture_output=True, text=True,
                         env=team["env"], timeout=60)
    assert bad.returncode == 2 and "add --http" in bad.stderr
    unreachable = subprocess.run([BRAIN, "serve", "--http", "--port", "0", "--store",
                                  f"postgresql://nobody@/none?host={quote(str(tmp_path), safe='')}"],
                                 capture_output=True, text=True, env=team["env"], timeout=60)
    assert unreachable.returncode == 1 and "fix:" in unreachable.stderr, unreachable.stderr


def test_two_front_ends_taking_turns_are_conformant(team):
    """The conformance runner over two front ends of one store, calls alternating between them:
    what one call writes (a fact, a cursor) the next reads through the other."""
    a, url_a = _front_end(team)
    b, url_b = _front_end(team)
    try:
        run = subprocess.run([BRAIN, "protocol", "conformance", "--target", url_a, "--alternate-with", url_b,
                              "--token", team["token"], "--json"], capture_output=True, text=True,
                             env=team["env"], timeout=300)
    finally:
        _stop(a)
        _stop(b)
    report = json.loads(run.stdout)
    failed = [r for r in report["results"] if r["status"] == "fail"]
    assert run.returncode == 0 and report["ok"], failed
    # every case runs: put_page seeds the entity through a front end on the vault's host (here, both)
    skipped = [r["name"] for r in report["results"] if r["status"] == "skip"]
    assert skipped == ["synthesize answers or says unavailable with a fix"], skipped
