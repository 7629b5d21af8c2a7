"""The OAuth store's refresh-token rotation, on its real file: a spent refresh token
presented again revokes its grant, also when two presentations race past the lookup; and the
bounds on what strangers can make it hold."""

from __future__ import annotations

import time

import pytest

from brain.daemon.http.oauth_store import OAuthStore, OAuthStoreError


def _granted(store: OAuthStore) -> tuple[str, str, str]:
    store.add_client("c1", "agent", {})
    access, refresh, _ = store.issue("c1", ["read"], None)
    return access, refresh, store.grant("refresh", refresh).family


def test_rotation_spends_the_old_refresh_token(places):
    store = OAuthStore(places)
    access, refresh, family = _granted(store)
    access2, refresh2, _ = store.issue("c1", ["read"], None, family=family, spend_refresh=refresh)
    assert store.grant("access", access) is None and store.grant("refresh", refresh) is None
    assert store.grant("access", access2) and store.grant("refresh", refresh2)
    assert not store.replayed("brt_never-issued")
    assert store.grant("access", access2)  # an unknown token revokes nothing


def test_a_spent_refresh_token_spent_again_revokes_the_grant(places):
    """The second of two racing refreshes with one token reaches `issue` after the first spent it."""
    store = OAuthStore(places)
    _, refresh, family = _granted(store)
    access2, refresh2, _ = store.issue("c1", ["read"], None, family=family, spend_refresh=refresh)
    with pytest.raises(OAuthStoreError, match="already used"):
        store.issue("c1", ["read"], None, family=family, spend_refresh=refresh)
    assert store.grant("access", access2) is None and store.grant("refresh", refresh2) is None
    assert store.client("c1") is not None


def test_other_grants_of_the_client_survive_a_replay(places):
    store = OAuthStore(places)
    _, refresh, family = _granted(store)
    other_access, _, _ = store.issue("c1", ["read", "write"], None)  # a second approval, its own grant
    store.issue("c1", ["read"], None, family=family, spend_refresh=refresh)
    assert store.replayed(refresh)
    assert store.grant("access", other_access) is not None


def test_registered_clients_and_waiting_requests_are_capped(places):
    from brain.daemon.http.oauth_store import MAX_CLIENTS, MAX_PENDING, OAuthStoreFull

    store = OAuthStore(places)
    for i in range(MAX_CLIENTS):
        store.add_client(f"c{i}", f"client {i}", {})
    _approve_all(store)   # unapproved ones would make room (below)
    with pytest.raises(OAuthStoreFull) as full:
        store.add_client("one-more", "x", {})
    assert "revoke-client" in full.value.fix
    for _ in range(MAX_PENDING):
        store.add_pending("c0", {"scopes": ["read"]})
    with pytest.raises(OAuthStoreFull) as waiting:
        store.add_pending("c1", {"scopes": ["read"]})
    assert "brain auth pending" in waiting.value.fix
    assert len(store.snapshot()["clients"]) == MAX_CLIENTS and len(store.snapshot()["pending"]) == MAX_PENDING


def test_a_registration_never_approved_expires_and_an_approved_one_stays(places):
    store = OAuthStore(places)
    store.add_client("never", "never approved", {})
    store.add_client("kept", "approved", {})
    _rid, code = store.add_pending("kept", {"scopes": ["read"]})
    assert store.approve(code) is not None
    with store.edit() as d:   # a day passes for both registrations
        for row in d["clients"].values():
            if "expires_at" in row:
                row["expires_at"] = time.time() - 1
    with store.edit():
        pass
    assert set(store.snapshot()["clients"]) == {"kept"}


def _approve_all(store: OAuthStore) -> None:
    with store.edit() as d:   # what `approve` leaves on a client: no expiry
        for row in d["clients"].values():
            row.pop("expires_at", None)


def test_a_registration_nobody_approved_expires_in_minutes_unless_it_awaits_the_owner(places):
    from brain.daemon.http.oauth_store import PENDING_TTL_S

    store = OAuthStore(places)
    store.add_client("quick", "agent", {})
    lifetime = store.snapshot()["clients"]["quick"]["expires_at"] - time.time()
    assert 60 < lifetime <= 30 * 60
    # asking the owner keeps the registration for as long as the request waits
    store.add_client("asking", "agent", {})
    store.add_pending("asking", {"scopes": ["read"]})
    assert store.snapshot()["clients"]["asking"]["expires_at"] - time.time() >= PENDING_TTL_S


def test_a_registration_flood_cannot_take_the_slot_of_a_client_the_owner_approves(places):
    """A flood fills every slot, a real client registers and asks, the flood goes on, the owner approves."""
    from brain.daemon.http.oauth_store import MAX_CLIENTS

    store = OAuthStore(places)
    for i in range(MAX_CLIENTS):
        store.add_client(f"flood-{i}", "flood", {})
    store.add_client("real", "the owner's agent", {})
    _rid, code = store.add_pending("real", {"scopes": ["read"]})
    for i in range(MAX_CLIENTS, 4 * MAX_CLIENTS):
        store.add_client(f"flood-{i}", "flood", {})
    clients = store.snapshot()["clients"]
    assert "real" in clients and len(clients) == MAX_CLIENTS
    assert "flood-0" not in clients and f"flood-{4 * MAX_CLIENTS - 1}" in clients   # the oldest made room
    assert store.approve(code) is not None
    for i in range(4 * MAX_CLIENTS, 6 * MAX_CLIENTS):
        store.add_client(f"flood-{i}", "flood", {})
    assert "real" in store.snapshot()["clients"] and "expires_at" not in store.snapshot()["clients"]["real"]
