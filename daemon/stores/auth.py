"""The auth store contract: HTTP bearer tokens and OAuth clients (docs/architecture.md, "Stores").

What the operator's commands (`brain auth ...`) and the HTTP server's bearer
check ask of the credentials kept in the state dir. The OAuth flow's own
bookkeeping (authorization codes, access and refresh grants) stays with the
OAuth provider's store (daemon/http/oauth_store.py): it answers the MCP SDK,
not the verbs or the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class AuthStoreError(ValueError):
    """The credentials file cannot be read or the request cannot be met; the message names the fix."""


@dataclass(frozen=True)
class Token:
    """A bearer token as kept: never its secret, which is shown once at creation."""

    name: str
    can_write: bool
    created_at: str
    # a narrower surface than the server's, set by the operator or asked for by the client
    surface: str | None = None
    surface_set_by: str | None = None


@dataclass(frozen=True)
class ClientRow:
    """One HTTP client, a bearer token or an OAuth client, with what it was granted."""

    id: str
    kind: str  # "token" | "oauth"
    name: str
    granted: str  # the scopes its live credentials carry ("" for an OAuth client with none)
    asked: str  # what it asked for: an OAuth client's registration scopes; a token's own
    surface: str | None  # its row's surface, None: the server's
    surface_set_by: str | None
    effective: str  # what it sees: its row's surface, never wider than the server's
    created_at: str


@dataclass(frozen=True)
class PendingRequest:
    """An OAuth client's authorization request waiting for the owner."""

    user_code: str
    client_id: str
    client_name: str
    scopes: tuple[str, ...]


@runtime_checkable
class AuthStore(Protocol):
    """What the CLI and the HTTP server may ask of bearer tokens and OAuth clients.

    Methods raise AuthStoreError when the file behind them cannot be read.
    """

    def create_token(self, name: str, *, can_write: bool) -> str:
        """Create a bearer token; its secret, the only time it is visible."""
        ...

    def tokens(self) -> list[Token]:
        ...

    def revoke_token(self, name: str) -> bool:
        """False when there is no such token."""
        ...

    def check_token(self, secret: str | None) -> Token | None:
        """The token a bearer secret stands for; None when unknown or revoked (or the file is unreadable)."""
        ...

    def clients(self, ceiling: str) -> list[ClientRow]:
        """Every HTTP client with what it was granted and the surface it sees under `ceiling`."""
        ...

    def set_client_surface(self, client_id: str, surface: str | None, set_by: str) -> bool:
        """Set one client's surface (None: back to the server's); False when no such client."""
        ...

    def revoke_oauth_client(self, client_id: str) -> bool:
        """Revoke an OAuth client (its `oauth:` id) and every token it holds; False when no such client."""
        ...

    def pending(self) -> list[PendingRequest]:
        ...

    def approve(self, user_code: str, *, read_only: bool = False) -> PendingRequest | None:
        """Approve the waiting request with this code (without write when `read_only`); None when none waits."""
        ...

    def deny(self, user_code: str) -> bool:
        ...
