"""The MCP SDK's authorization-server provider and token verifier, over `oauth_store`.

The SDK's handlers do the protocol (metadata, registration, /authorize,
/token with PKCE, /revoke); this class says what brain does at each step:

- registration makes a public client (no secret: see oauth_store);
- /authorize parks the request until the vault's owner approves it
  (`brain auth approve CODE`) and sends the browser to the waiting page
  (oauth_approval), which hands the code to the client's redirect URI;
- access tokens are short-lived, refresh tokens rotate, revoking either
  revokes the whole grant, and so does presenting a refresh token that was
  already used (it was copied: OAuth 2.1 refresh-token rotation).

`BrainTokenVerifier` accepts both kinds of credential on /mcp: the bearer
tokens of `brain auth token create` and OAuth access tokens.
"""

from __future__ import annotations

import logging
import sys

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from .auth_store import FileAuthStore
from .oauth_guard import redirect_uri_problem
from .oauth_store import SCOPES, OAuthStore, OAuthStoreError, OAuthStoreFull
from ..stores.auth import AuthStore

log = logging.getLogger("brain.oauth")

APPROVAL_PATH = "/oauth/approve"


class BrainAccess(AccessToken):
    """An authenticated caller on /mcp: an OAuth grant or a bearer token."""

    kind: str  # "oauth" | "token"
    name: str  # delta-cursor namespace: the token's name, or the OAuth client's id
    surface: str | None = None


class BrainOAuthProvider:
    def __init__(self, store: OAuthStore, base_url: str, say=None):
        self.store = store
        self.base_url = base_url.rstrip("/")
        self.say = say or (lambda msg: print(f"brain serve --http: {msg}", file=sys.stderr, flush=True))

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        row = self.store.client(client_id)
        return OAuthClientInformationFull.model_validate(row["info"]) if row else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        for uri in client_info.redirect_uris or ():
            why = redirect_uri_problem(str(uri))
            if why is not None:
                raise RegistrationError("invalid_redirect_uri", why)
        # public client: the answer carries no secret, and nothing secret is stored
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        client_info.token_endpoint_auth_method = "none"
        name = (client_info.client_name or "unnamed client")[:80]
        try:
            self.store.add_client(client_info.client_id, name, client_info.model_dump(mode="json"))
        except OAuthStoreFull as e:
            # RFC 7591 has no "full" code; the description says what frees room
            raise RegistrationError("invalid_client_metadata", f"{e.message}; {e.fix}") from None
        self.say(f"OAuth client registered: {name!r} ({client_info.client_id}).")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        scopes = [s for s in (params.scopes or ["read"]) if s in SCOPES] or ["read"]
        row = self.store.client(client.client_id)
        try:
            request_id, user_code = self.store.add_pending(client.client_id, {
                "scopes": scopes, "code_challenge": params.code_challenge, "redirect_uri": str(params.redirect_uri),
                "redirect_uri_explicit": params.redirect_uri_provided_explicitly, "state": params.state,
                "resource": params.resource})
        except OAuthStoreFull as e:
            raise AuthorizeError("temporarily_unavailable", f"{e.message}; {e.fix}") from None
        self.say(f"{row['name'] if row else client.client_id!r} asks for {' + '.join(scopes)} access. "
                 f"To allow it, run on this machine: brain auth approve {user_code}")
        return f"{self.base_url}{APPROVAL_PATH}?request={request_id}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str):
        row = self.store.code(authorization_code)
        if row is None or row["client_id"] != client.client_id:
            return None
        return AuthorizationCode(
            code=authorization_code, scopes=row["scopes"], expires_at=row["expires_at"], client_id=row["client_id"],
            code_challenge=row["code_challenge"], redirect_uri=row["redirect_uri"],
            redirect_uri_provided_explicitly=row["redirect_uri_explicit"], resource=row.get("resource"))

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code) -> OAuthToken:
        try:
            access, refresh, ttl = self.store.issue(client.client_id, authorization_code.scopes,
                                                    authorization_code.resource, spend_code=authorization_code.code)
        except OAuthStoreError as e:
            raise TokenError("invalid_grant", str(e)) from None
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=ttl, refresh_token=refresh,
                          scope=" ".join(authorization_code.scopes))

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str):
        grant = self.store.grant("refresh", refresh_token)
        if grant is None:
            if self.store.replayed(refresh_token):  # a copy is in other hands: the grant is revoked
                self.say(f"a used refresh token of OAuth client {client.client_id} was presented again: "
                         "every token of that grant is revoked; the client must be approved again.")
            return None
        if grant.client_id != client.client_id:
            return None
        return _Refresh(token=refresh_token, client_id=grant.client_id, scopes=list(grant.scopes),
                        expires_at=grant.expires_at, resource=grant.resource, family=grant.family)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token, scopes) -> OAuthToken:
        try:
            access, refresh, ttl = self.store.issue(client.client_id, scopes, refresh_token.resource,
                                                    family=refresh_token.family, spend_refresh=refresh_token.token)
        except OAuthStoreError as e:
            raise TokenError("invalid_grant", str(e)) from None
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=ttl, refresh_token=refresh,
                          scope=" ".join(scopes))

    async def load_access_token(self, token: str):
        grant = self.store.grant("access", token)
        if grant is None:
            return None
        return _Access(token=token, client_id=grant.client_id, scopes=list(grant.scopes),
                       expires_at=grant.expires_at, resource=grant.resource, family=grant.family)

    async def revoke_token(self, token) -> None:
        self.store.revoke_family(token.family)

    async def exchange_identity_assertion(self, client, params) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "brain accepts the authorization_code and refresh_token grants")


class _Refresh(RefreshToken):
    family: str


class _Access(AccessToken):
    family: str


class BrainTokenVerifier:
    """Bearer tokens first (a `brain_` prefix), then OAuth access tokens; None means 401."""

    def __init__(self, places, store: OAuthStore | None, auth: AuthStore | None = None):
        self.auth: AuthStore = auth if auth is not None else FileAuthStore(places)
        self.store = store

    async def verify_token(self, token: str) -> BrainAccess | None:
        return self.known(token)

    def known(self, token: str | None) -> BrainAccess | None:
        """The caller a credential stands for, or None; synchronous, for the connection limits too."""
        if not token:
            return None
        found = self.auth.check_token(token)
        if found is not None:
            return BrainAccess(token=token, client_id=f"token:{found.name}", kind="token", name=found.name,
                               scopes=["read", "write"] if found.can_write else ["read"], surface=found.surface)
        if self.store is None:
            return None
        try:
            grant = self.store.grant("access", token)
            row = self.store.client(grant.client_id) if grant else None
        except OAuthStoreError as e:
            log.warning("%s", e)
            return None
        if grant is None or row is None:
            return None
        return BrainAccess(token=token, client_id=grant.client_id, kind="oauth", name=grant.client_id,
                           scopes=list(grant.scopes), expires_at=grant.expires_at, resource=grant.resource,
                           surface=row.get("surface"))

