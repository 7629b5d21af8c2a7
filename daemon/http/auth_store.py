"""The embedded AuthStore (daemon/stores/auth.py): bearer tokens in `auth_tokens.json`
(tokens.py) and OAuth clients in `oauth.json` (oauth_store.py), both in the state dir."""

from __future__ import annotations

from ..places import Places
from ..stores.auth import ClientRow, PendingRequest, Token
from .client_rows import OAUTH_PREFIX, list_clients, set_client_surface
from .oauth_store import OAuthStore
from .tokens import TokenChecker, create_token, list_tokens, revoke_token


def _request(row: dict) -> PendingRequest:
    return PendingRequest(row["user_code"], row["client_id"], row["client_name"], tuple(row["scopes"]))


class FileAuthStore:
    """Tokens and OAuth clients of one BRAIN_HOME; each call reads the files as they are now."""

    def __init__(self, places: Places):
        self.places = places
        self.oauth = OAuthStore(places)
        self._checker = TokenChecker(places)

    def create_token(self, name: str, *, can_write: bool) -> str:
        return create_token(self.places, name, can_write=can_write)

    def tokens(self) -> list[Token]:
        return list_tokens(self.places)

    def revoke_token(self, name: str) -> bool:
        return revoke_token(self.places, name)

    def check_token(self, secret: str | None) -> Token | None:
        return self._checker.check(secret)

    def clients(self, ceiling: str) -> list[ClientRow]:
        return list_clients(self.places, ceiling)

    def set_client_surface(self, client_id: str, surface: str | None, set_by: str) -> bool:
        return set_client_surface(self.places, client_id, surface, set_by)

    def revoke_oauth_client(self, client_id: str) -> bool:
        if not client_id.startswith(OAUTH_PREFIX):
            return False
        return self.oauth.revoke_client(client_id[len(OAUTH_PREFIX):])

    def pending(self) -> list[PendingRequest]:
        return [_request(r) for r in self.oauth.pending()]

    def approve(self, user_code: str, *, read_only: bool = False) -> PendingRequest | None:
        row = self.oauth.approve(user_code, read_only=read_only)
        return _request(row) if row is not None else None

    def deny(self, user_code: str) -> bool:
        return self.oauth.deny(user_code)
