"""The OAuth endpoints strangers can reach, bounded: Host/Origin, rate, caps, redirect URIs; and
RFC 7009 revocation by a public client (real `brain serve --http`, real SDK OAuth client)."""

from __future__ import annotations

import json

import anyio
import httpx2 as httpx
import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)
from test_oauth_e2e import MemoryStorage, OwnerInTheLoop, _provider, _raw_status, _session_calls, http_url  # noqa: F401

pytestmark = pytest.mark.usefixtures("reaper")


def _register(base: str, redirect: str = "http://127.0.0.1:9/cb", headers: dict | None = None) -> httpx.Response:
    return httpx.post(f"{base}/register", headers=headers or {}, json={
        "client_name": "t", "redirect_uris": [redirect], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "none"})


def test_a_public_client_revokes_with_only_its_client_id(http_url):
    storage, owner = MemoryStorage(), OwnerInTheLoop()
    auth = _provider(http_url, storage, owner)
    anyio.run(_session_calls, http_url, auth, lambda s: s.list_tools())
    base, cid, tokens = http_url.rsplit("/mcp", 1)[0], storage.client.client_id, storage.tokens
    assert _raw_status(http_url, tokens.access_token) == 200
    r = httpx.post(f"{base}/revoke", data={"token": tokens.access_token, "client_id": cid})
    assert r.status_code == 200, r.text
    assert _raw_status(http_url, tokens.access_token) == 401
    refreshed = httpx.post(f"{base}/token", data={"grant_type": "refresh_token", "client_id": cid,
                                                  "refresh_token": tokens.refresh_token})
    assert refreshed.status_code == 400  # the whole grant went


@pytest.mark.parametrize("uri", ["javascript:alert(1)", "data:text/html,hi", "file:///etc/passwd",
                                 "http://evil.example/cb", "myapp:/cb"])
def test_unsafe_redirect_uris_are_refused_at_registration(http_url, places, uri):
    base = http_url.rsplit("/mcp", 1)[0]
    r = _register(base, uri)
    assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri", r.text
    assert "https" in r.json()["error_description"]
    stored = places.state_dir / "oauth.json"
    assert not stored.exists() or json.loads(stored.read_text())["clients"] == {}


@pytest.mark.parametrize("uri", ["https://agent.example/cb", "http://localhost:7/cb", "http://[::1]:7/cb",
                                 "com.example.app:/oauth2redirect"])
def test_safe_redirect_uris_are_accepted(http_url, uri):
    r = _register(http_url.rsplit("/mcp", 1)[0], uri)
    assert r.status_code == 201, r.text


def test_register_and_authorize_check_host_and_origin(http_url, places):
    base = http_url.rsplit("/mcp", 1)[0]
    assert _register(base, headers={"Host": "evil.example"}).status_code == 421
    assert _register(base, headers={"Origin": "http://evil.example"}).status_code == 403
    r = httpx.get(f"{base}/authorize", headers={"Origin": "http://evil.example"},
                  params={"client_id": "x", "response_type": "code"})
    assert r.status_code == 403
    stored = places.state_dir / "oauth.json"
    assert not stored.exists() or json.loads(stored.read_text())["clients"] == {}


def test_a_registration_flood_is_rate_limited_and_capped(http_url, places):
    from brain.daemon.http.oauth_guard import BURST
    from brain.daemon.http.oauth_store import MAX_CLIENTS

    base = http_url.rsplit("/mcp", 1)[0]
    statuses = [_register(base).status_code for _ in range(BURST + 10)]
    assert statuses.count(201) <= BURST + 2 and statuses.count(429) >= 8, statuses
    limited = _register(base)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert "retry" in limited.json()["error_description"]
    clients = json.loads((places.state_dir / "oauth.json").read_text())["clients"]
    assert len(clients) <= min(BURST + 2, MAX_CLIENTS)
    # every registration nobody approved carries an expiry
    assert all("expires_at" in c for c in clients.values())


def test_authorize_past_the_waiting_cap_is_temporarily_unavailable(places):
    from mcp.server.auth.provider import AuthorizationParams, AuthorizeError
    from mcp.shared.auth import OAuthClientInformationFull

    from brain.daemon.http.oauth_provider import BrainOAuthProvider
    from brain.daemon.http.oauth_store import MAX_PENDING, OAuthStore

    store = OAuthStore(places)
    provider = BrainOAuthProvider(store, "http://127.0.0.1:1", say=lambda msg: None)
    client = OAuthClientInformationFull(client_id="c1", redirect_uris=["http://127.0.0.1:9/cb"],
                                        token_endpoint_auth_method="none")
    anyio.run(provider.register_client, client)
    params = AuthorizationParams(state="s", scopes=["read"], code_challenge="x" * 43,
                                 redirect_uri="http://127.0.0.1:9/cb", redirect_uri_provided_explicitly=True)
    for _ in range(MAX_PENDING):
        anyio.run(provider.authorize, client, params)
    with pytest.raises(AuthorizeError) as refused:
        anyio.run(provider.authorize, client, params)
    assert refused.value.error == "temporarily_unavailable" and "brain auth pending" in refused.value.error_description
    assert len(store.snapshot()["pending"]) == MAX_PENDING


def test_registration_past_the_client_cap_says_how_to_free_room(places):
    from mcp.server.auth.provider import RegistrationError
    from mcp.shared.auth import OAuthClientInformationFull

    from brain.daemon.http.oauth_provider import BrainOAuthProvider
    from brain.daemon.http.oauth_store import MAX_CLIENTS, OAuthStore

    store = OAuthStore(places)
    for i in range(MAX_CLIENTS):
        store.add_client(f"c{i}", "x", {})
    with store.edit() as d:   # every slot held by a client the owner approved
        for row in d["clients"].values():
            row.pop("expires_at", None)
    provider = BrainOAuthProvider(store, "http://127.0.0.1:1", say=lambda msg: None)
    client = OAuthClientInformationFull(client_id="late", redirect_uris=["http://127.0.0.1:9/cb"],
                                        token_endpoint_auth_method="none")
    with pytest.raises(RegistrationError) as refused:
        anyio.run(provider.register_client, client)
    assert str(MAX_CLIENTS) in refused.value.error_description
    assert "brain auth revoke-client" in refused.value.error_description
    assert "late" not in store.snapshot()["clients"]


def test_a_finished_flood_leaves_room_for_the_owners_client(places):
    """Every slot held by registrations nobody approved: a real one still registers, at once."""
    from mcp.shared.auth import OAuthClientInformationFull

    from brain.daemon.http.oauth_provider import BrainOAuthProvider
    from brain.daemon.http.oauth_store import MAX_CLIENTS, OAuthStore

    store = OAuthStore(places)
    for i in range(MAX_CLIENTS):
        store.add_client(f"flood-{i}", "flood", {})
    provider = BrainOAuthProvider(store, "http://127.0.0.1:1", say=lambda msg: None)
    client = OAuthClientInformationFull(client_id="real", redirect_uris=["http://127.0.0.1:9/cb"],
                                        token_endpoint_auth_method="none")
    anyio.run(provider.register_client, client)
    clients = store.snapshot()["clients"]
    assert "real" in clients and len(clients) == MAX_CLIENTS
