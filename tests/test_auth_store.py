"""The auth store contract (daemon/stores/auth.py) on both backends: what `brain auth` and the
HTTP bearer check ask of tokens and OAuth clients, on the embedded store's real files and on
PostgreSQL (daemon/postgres/auth_store.py, the test session's real server)."""

from __future__ import annotations

import pytest

from brain.daemon.http.auth_store import FileAuthStore
from brain.daemon.http.oauth_store import OAuthStore
from brain.daemon.http.tokens import tokens_file
from brain.daemon.stores.auth import AuthStore, AuthStoreError, PendingRequest


class Backend:
    """An auth store, and the OAuth flow's side of it (registering a client, asking for access)."""

    def __init__(self, store, add_client, add_pending):
        self.store, self.add_client, self.add_pending = store, add_client, add_pending


@pytest.fixture(params=["embedded", "postgres"])
def backend(request, places):
    if request.param == "embedded":
        oauth = OAuthStore(places)
        yield Backend(FileAuthStore(places), oauth.add_client,
                      lambda cid, scopes: oauth.add_pending(cid, {"scopes": scopes}))
        return
    from brain.daemon.postgres.auth_store import PgAuthStore

    store = PgAuthStore(request.getfixturevalue("pg_migrated_dsn"))
    yield Backend(store, store.add_client, store.add_pending)
    store.close()


def test_a_token_is_checked_until_it_is_revoked(backend):
    store: AuthStore = backend.store
    assert isinstance(store, AuthStore)
    secret = store.create_token("laptop", can_write=True)
    found = store.check_token(secret)
    assert found is not None and found.name == "laptop" and found.can_write
    assert [t.name for t in store.tokens()] == ["laptop"]
    assert [(c.id, c.kind, c.granted) for c in store.clients("full")] == [("laptop", "token", "read write")]
    assert store.check_token(secret + "x") is None and store.check_token(None) is None
    assert store.revoke_token("laptop") and not store.revoke_token("laptop")
    assert store.check_token(secret) is None


def test_token_names_are_checked_and_never_taken_twice(backend):
    store = backend.store
    store.create_token("ci", can_write=False)
    with pytest.raises(AuthStoreError, match="revoke it first"):
        store.create_token("ci", can_write=True)
    for bad in ("", "has space", "local"):
        with pytest.raises(AuthStoreError):
            store.create_token(bad, can_write=False)
    assert store.set_client_surface("ci", "verbs", "operator")
    (token,) = store.tokens()
    assert (token.can_write, token.surface, token.surface_set_by) == (False, "verbs", "operator")
    assert not store.set_client_surface("nobody", "verbs", "operator")


def test_an_oauth_request_is_approved_through_the_contract(backend):
    backend.add_client("c1", "agent", {})
    _, code = backend.add_pending("c1", ["read", "write"])
    store = backend.store
    assert store.pending() == [PendingRequest(code, "c1", "agent", ("read", "write"))]
    assert store.approve(code.lower().replace("-", ""), read_only=True) == \
        PendingRequest(code, "c1", "agent", ("read",))
    assert store.pending() == [] and not store.deny("NOPE-0000")
    assert [(c.id, c.kind, c.name) for c in store.clients("full")] == [("oauth:c1", "oauth", "agent")]
    assert store.set_client_surface("oauth:c1", "verbs", "operator")
    assert [c.effective for c in store.clients("full")] == ["verbs"]
    assert not store.revoke_oauth_client("c1")  # a token name, not an `oauth:` id
    assert store.revoke_oauth_client("oauth:c1") and not store.revoke_oauth_client("oauth:c1")
    assert store.clients("full") == []


def test_a_denied_request_waits_no_more(backend):
    backend.add_client("c2", "other", {})
    _, code = backend.add_pending("c2", ["read"])
    assert backend.store.deny(code)
    assert backend.store.pending() == []


def test_an_unreadable_file_is_one_error_naming_the_fix(places):
    tokens_file(places).parent.mkdir(parents=True, exist_ok=True)
    tokens_file(places).write_text("{not json", encoding="utf-8")
    with pytest.raises(AuthStoreError, match="delete"):
        FileAuthStore(places).tokens()


def test_an_unreachable_database_is_one_error_naming_the_fix_and_admits_no_one(pg_server, tmp_path):
    from brain.daemon.postgres.auth_store import PgAuthStore

    store = PgAuthStore(f"host={tmp_path} port=5432 user=postgres dbname=postgres")  # no server there
    with pytest.raises(AuthStoreError, match="store URL"):
        store.tokens()
    assert store.check_token("brain_anything") is None


def test_a_registration_flood_neither_holds_slots_for_a_day_nor_takes_an_approved_client(backend, monkeypatch):
    """Unapproved registrations lapse after 15 minutes and, at the limit of 100, the oldest of them makes
    room; the client the owner approved stays (docs/protocol.md §11.5), on both backends."""
    import time as time_mod

    backend.add_client("owner-app", "owner's agent", {})
    _, code = backend.add_pending("owner-app", ["read"])
    assert backend.store.approve(code)
    for i in range(150):
        backend.add_client(f"flood-{i}", "flood", {})   # never refused, never past the limit
    backend.add_client("late", "a real client", {})
    ids = [c.id for c in backend.store.clients("full")]
    assert "oauth:owner-app" in ids and "oauth:late" in ids and len(ids) <= 100, len(ids)
    real = time_mod.time
    monkeypatch.setattr(time_mod, "time", lambda: real() + 16 * 60)
    backend.add_client("next", "sixteen minutes later", {})
    ids = [c.id for c in backend.store.clients("full")]
    assert "oauth:late" not in ids and "oauth:flood-149" not in ids   # lapsed, never approved
    assert "oauth:owner-app" in ids and "oauth:next" in ids
