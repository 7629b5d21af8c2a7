"""OAuth 2.1 on `brain serve --http`, end to end with the MCP SDK's own OAuth client.

The client discovers the metadata from the 401, registers itself, is sent
through the approval page, the owner runs `brain auth approve CODE` in a
terminal, the client exchanges the code (PKCE), calls verbs, refreshes,
is rescoped and sees its tool list narrow, is revoked and gets 401; a
replayed refresh token revokes its grant.
"""

from __future__ import annotations

import json
import re
import stat
import time

import anyio
import httpx2 as httpx
import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    body_of, configured, daemon, reaper, run_brain, small_vault, stop_pid,
)
from test_transport_http import _start_http

from brain.daemon.protocol.surfaces import SURFACE_ORDER as SURFACES
from brain.daemon.protocol.tools import VERB_NAMES, surface_tools

pytestmark = pytest.mark.usefixtures("reaper")

REDIRECT = "http://127.0.0.1:9/callback"  # never contacted: the test reads the Location header


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client = None
        self.history: list = []

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


class OwnerInTheLoop:
    """The browser side: follow /authorize to the waiting page, have the owner approve, collect the code."""

    def __init__(self, deny: bool = False, read_only: bool = False):
        self.location: str | None = None
        self.user_code: str | None = None
        self.deny = deny
        self.approve_args = ["--read-only"] if read_only else []

    async def redirect(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=False) as hc:
            r = await hc.get(url)
            assert r.status_code == 302, r.text
            waiting = r.headers["location"]
            page = await hc.get(waiting)
            assert page.status_code == 200 and 'http-equiv="refresh"' in page.text
            self.user_code = re.search(r'data-user-code="([A-Z0-9-]+)"', page.text).group(1)
            # still waiting: nobody approved yet
            assert (await hc.get(waiting)).status_code == 200
            done = await anyio.to_thread.run_sync(
                lambda: run_brain("auth", "deny", self.user_code) if self.deny
                else run_brain("auth", "approve", self.user_code, *self.approve_args))
            assert done.returncode == 0, done.stderr
            final = await hc.get(waiting)
            assert final.status_code == 302
            self.location = final.headers["location"]
            # handed out once
            assert (await hc.get(waiting)).status_code == 400

    async def callback(self):
        from mcp.client.auth import AuthorizationCodeResult

        q = httpx.URL(self.location).params
        if "error" in q:
            raise RuntimeError(q["error"])
        return AuthorizationCodeResult(code=q["code"], state=q.get("state"))


def _provider(url: str, storage: MemoryStorage, owner: OwnerInTheLoop, scope: str = "read write"):
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    meta = OAuthClientMetadata(client_name="e2e agent", redirect_uris=[REDIRECT], scope=scope,
                               grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(server_url=url, client_metadata=meta, storage=storage,
                               redirect_handler=owner.redirect, callback_handler=owner.callback)


async def _session_calls(url: str, auth, work):
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(auth=auth, follow_redirects=True, timeout=30) as hc:
        async with streamable_http_client(url, http_client=hc) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await work(s)


def _raw_status(url: str, token: str) -> int:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    r = httpx.post(url, json=init, headers={"Authorization": f"Bearer {token}",
                                           "Accept": "application/json, text/event-stream"})
    return r.status_code


@pytest.fixture
def http_url(daemon):
    proc, url = _start_http()
    yield url
    stop_pid(proc.pid)
    proc.wait(10)
    proc.stderr.close()


def test_oauth_client_end_to_end(http_url, places):
    storage, owner = MemoryStorage(), OwnerInTheLoop()
    auth = _provider(http_url, storage, owner)

    async def first(s):
        names = [t.name for t in (await s.list_tools()).tools]
        who = body_of(await s.call_tool("whoami", {}))
        saved = body_of(await s.call_tool("remember", {"fact": "Alice moved to Lisbon", "provenance": "e2e",
                                                       "entity": "people/alice-example"}))
        got = body_of(await s.call_tool("recall", {"entity": "people/alice-example"}))
        return names, who, saved, got

    names, who, saved, got = anyio.run(_session_calls, http_url, auth, first)
    assert names == [t.name for t in surface_tools("full")]
    assert who["client_id"] == f"oauth:{storage.client.client_id}" and who["can_write"] is True
    assert saved["status"] == "inserted"
    assert "Alice moved to Lisbon" in [f["fact"] for f in got["facts"]]
    assert storage.client.client_secret is None  # a public client: PKCE, nothing secret stored
    assert storage.tokens.refresh_token and storage.tokens.expires_in <= 3600

    # nothing secret is kept in plain text, and the file is the owner's only
    oauth_file = places.state_dir / "oauth.json"
    assert stat.S_IMODE(oauth_file.stat().st_mode) == 0o600
    text = oauth_file.read_text()
    for secret in (storage.tokens.access_token, storage.tokens.refresh_token):
        assert secret not in text

    # our conformance runner certifies the server over OAuth, with this client's access token
    conf = run_brain("protocol", "conformance", "--target", http_url, "--token", storage.tokens.access_token,
                     "--json", timeout=600)
    assert conf.returncode == 0, conf.stdout[-2000:] + conf.stderr[-2000:]
    report = json.loads(conf.stdout)
    assert report["failed"] == 0 and report["passed"] >= 20, report

    # refresh: the client's access token is due, so its next request refreshes first
    old = storage.tokens
    auth.context.token_expiry_time = time.time() - 1
    listed = anyio.run(_session_calls, http_url, auth, lambda s: s.list_tools())
    assert len(listed.tools) == len(surface_tools("full"))
    assert storage.tokens.access_token != old.access_token and storage.tokens.refresh_token != old.refresh_token
    assert _raw_status(http_url, old.access_token) == 401  # rotated out with its refresh token

    # the operator rescopes the client: its next tools/list is the narrower surface
    cid = f"oauth:{storage.client.client_id}"
    r = run_brain("auth", "rescope-client", cid, "--surface", "verbs")
    assert r.returncode == 0, r.stderr
    listed = anyio.run(_session_calls, http_url, auth, lambda s: s.list_tools())
    assert {t.name for t in listed.tools} == set(VERB_NAMES)
    line = next(x for x in run_brain("auth", "clients").stdout.splitlines() if x.startswith(cid))
    assert "granted read write" in line and "surface verbs (set by operator)" in line

    # revoked: the very next request is refused
    r = run_brain("auth", "revoke-client", cid)
    assert r.returncode == 0, r.stderr
    assert _raw_status(http_url, storage.tokens.access_token) == 401


def test_request_tools_narrows_but_never_widens(http_url, places):
    # the client asks for write; the owner grants read only
    storage, owner = MemoryStorage(), OwnerInTheLoop(read_only=True)
    auth = _provider(http_url, storage, owner)

    async def work(s):
        before = {t.name for t in (await s.list_tools()).tools}
        narrowed = body_of(await s.call_tool("request_tools", {"surface": "starter"}))
        after = {t.name for t in (await s.list_tools()).tools}
        wider = await s.call_tool("request_tools", {"surface": "full"})
        write = await s.call_tool("remember", {"fact": "x", "provenance": "y"})
        return before, narrowed, after, wider, write

    before, narrowed, after, wider, write = anyio.run(_session_calls, http_url, auth, work)
    assert before == {t.name for t in surface_tools("full")}
    assert narrowed["surface"] == "starter" and narrowed["previous"] == "full"
    assert after == {t.name for t in surface_tools("starter")}
    env = body_of(wider)
    assert wider.is_error and env["error"] == "scope_denied" and "rescope-client" in env["suggestion"]
    # a read-scoped client cannot write: the protocol's envelope, with the fix
    env = body_of(write)
    assert write.is_error and env["error"] == "scope_denied" and env["protocol_version"] == 1
    assert "write" in env["suggestion"]
    rows = json.loads((places.state_dir / "oauth.json").read_text())["clients"]
    assert [r["surface_set_by"] for r in rows.values()] == ["client"]
    # the operator's list shows what was granted, beside what was asked for
    line = next(x for x in run_brain("auth", "clients").stdout.splitlines() if storage.client.client_id in x)
    assert "granted read " in line and "surface starter (set by client)" in line and "asked 'read write'" in line

    # the client revokes its own token (RFC 7009): refused from the next request
    access = storage.tokens.access_token
    assert _raw_status(http_url, access) == 200
    base = http_url.rsplit("/mcp", 1)[0]
    # (the SDK's handler wants the client_secret field present, empty for a public client)
    r = httpx.post(f"{base}/revoke", data={"token": access, "client_id": storage.client.client_id,
                                           "client_secret": ""})
    assert r.status_code == 200
    assert _raw_status(http_url, access) == 401


def _refresh(base: str, client_id: str, refresh_token: str) -> httpx.Response:
    return httpx.post(f"{base}/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                             "client_id": client_id, "client_secret": ""})


def test_a_replayed_refresh_token_revokes_the_grant(http_url, places):
    """Refresh tokens rotate; one presented a second time was copied, so every
    token of its grant dies: the next request with any of them gets 401."""
    storage, owner = MemoryStorage(), OwnerInTheLoop()
    auth = _provider(http_url, storage, owner)
    anyio.run(_session_calls, http_url, auth, lambda s: s.list_tools())
    base, cid, first = http_url.rsplit("/mcp", 1)[0], storage.client.client_id, storage.tokens

    r = _refresh(base, cid, first.refresh_token)
    assert r.status_code == 200, r.text
    rotated = r.json()
    assert _raw_status(http_url, rotated["access_token"]) == 200
    assert _raw_status(http_url, first.access_token) == 401  # rotated out

    # the first refresh token again: refused, and the grant it came from is revoked
    again = _refresh(base, cid, first.refresh_token)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert _raw_status(http_url, rotated["access_token"]) == 401
    late = _refresh(base, cid, rotated["refresh_token"])
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
    snap = json.loads((places.state_dir / "oauth.json").read_text())
    assert snap["access"] == {} and snap["refresh"] == {}
    # the client itself stays registered: its owner may approve it again
    assert list(snap["clients"]) == [cid]


def test_bearer_token_rows_are_rescoped_too(http_url, places):
    from brain.daemon.http.tokens import create_token

    token = create_token(places, "laptop", can_write=True)

    async def names(s):
        return {t.name for t in (await s.list_tools()).tools}

    headers = {"Authorization": f"Bearer {token}"}

    async def listed():
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with httpx.AsyncClient(headers=headers, timeout=30) as hc:
            async with streamable_http_client(http_url, http_client=hc) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    first = await names(s)
                    assert run_brain("auth", "rescope-client", "laptop", "--surface", "starter").returncode == 0
                    # the same session: the very next tools/list is narrower
                    return first, await names(s)

    first, second = anyio.run(listed)
    assert first == {t.name for t in surface_tools("full")}
    assert second == {t.name for t in surface_tools("starter")}


def test_clients_list_what_they_see_under_the_running_servers_surface(daemon, places):
    from brain.daemon.http.tokens import create_token

    create_token(places, "laptop", can_write=False)
    create_token(places, "desk", can_write=True)
    assert run_brain("auth", "rescope-client", "desk", "--surface", "verbs").returncode == 0
    proc, url = _start_http("--surface", "starter")
    try:
        out = run_brain("auth", "clients").stdout.splitlines()
    finally:
        stop_pid(proc.pid)
        proc.wait(10)
        proc.stderr.close()
    assert out[0] == f"server surface: starter (from the HTTP server at {url}); no client sees more"
    laptop = next(x for x in out if x.startswith("laptop "))
    desk = next(x for x in out if x.startswith("desk "))
    assert "granted read " in laptop and "surface starter (the server's)" in laptop
    assert "granted read write" in desk and "surface verbs (set by operator)" in desk
    # once the server stops, the ceiling is the configured one again
    assert run_brain("auth", "clients").stdout.startswith("server surface: full (from config mcp_surface")


def test_denied_request_never_gets_a_token(http_url):
    storage, owner = MemoryStorage(), OwnerInTheLoop(deny=True)
    auth = _provider(http_url, storage, owner)
    with pytest.raises(BaseException):
        anyio.run(_session_calls, http_url, auth, lambda s: s.list_tools())
    assert storage.tokens is None and owner.location and "error=access_denied" in owner.location


def test_metadata_is_published(http_url):
    base = http_url.rsplit("/mcp", 1)[0]
    prm = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
    assert prm["resource"] == http_url and prm["authorization_servers"] == [base]
    asm = httpx.get(f"{base}/.well-known/oauth-authorization-server").json()
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert set(asm["scopes_supported"]) == {"read", "write"} and asm["revocation_endpoint"].endswith("/revoke")
    assert SURFACES  # the surfaces a client may be rescoped to
