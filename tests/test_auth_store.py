"""The auth store contract (daemon/stores/auth.py) on its real files: what `brain auth` and the
HTTP bearer check ask of tokens and OAuth clients."""

from __future__ import annotations

import pytest

from brain.daemon.http.auth_store import FileAuthStore
from brain.daemon.http.oauth_store import OAuthStore
from brain.daemon.http.tokens import tokens_file
from brain.daemon.stores.auth import AuthStore, AuthStoreError, PendingRequest


def test_a_token_is_checked_until_it_is_revoked(places):
    store: AuthStore = FileAuthStore(places)
    assert isinstance(store, AuthStore)
    secret = store.create_token("laptop", can_write=True)
    found = store.check_token(secret)
    assert found is not None and found.name == "laptop" and found.can_write
    assert [t.name for t in store.tokens()] == ["laptop"]
    assert [(c.id, c.kind, c.granted) for c in store.clients("full")] == [("laptop", "token", "read write")]
    assert store.check_token(secret + "x") is None and store.check_token(None) is None
    assert store.revoke_token("laptop") and not store.revoke_token("laptop")
    assert store.check_token(secret) is None


def test_an_oauth_request_is_approved_through_the_contract(places):
    oauth = OAuthStore(places)
    oauth.add_client("c1", "agent", {})
    _, code = oauth.add_pending("c1", {"scopes": ["read", "write"]})
    store = FileAuthStore(places)
    assert store.pending() == [PendingRequest(code, "c1", "agent", ("read", "write"))]
    assert store.approve(code, read_only=True) == PendingRequest(code, "c1", "agent", ("read",))
    assert store.pending() == [] and not store.deny("NOPE-0000")
    assert store.set_client_surface("oauth:c1", "verbs", "operator")
    assert not store.revoke_oauth_client("c1")  # a token name, not an `oauth:` id
    assert store.revoke_oauth_client("oauth:c1") and not store.revoke_oauth_client("oauth:c1")


def test_an_unreadable_file_is_one_error_naming_the_fix(places):
    tokens_file(places).parent.mkdir(parents=True, exist_ok=True)
    tokens_file(places).write_text("{not json", encoding="utf-8")
    with pytest.raises(AuthStoreError, match="delete"):
        FileAuthStore(places).tokens()
