"""Bearer tokens and OAuth clients on PostgreSQL: the AuthStore contract (daemon/stores/auth.py).

The same rules as the embedded store (daemon/http/auth_store.py over tokens.py,
oauth_store.py and client_rows.py): a token's secret is shown once and only
its sha256 is kept; names are 1-64 letters, digits, '.', '_' or '-', and
"local" and "remote" are other lanes' cursor namespaces; an OAuth client is
`oauth:<id>`, a registration the owner never approved lapses, and revoking a
client drops its requests and grants with it (foreign keys). Every front end on
the database checks the same tokens, so a revocation holds on all of them from
their next request.

A token is looked up by its secret's hash: how long the lookup takes says
nothing usable about the secret. A server that cannot be reached is an
`AuthStoreError` naming the fix, and a bearer check then admits no one.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from contextlib import contextmanager
from typing import Iterator

import psycopg
from psycopg.types.json import Jsonb

from ...indexer.vault.timestamps import now_iso
from ..protocol.errors import InvalidParams
from ..protocol.surfaces import SURFACE_ORDER, effective_surface
from ..stores.auth import AuthStoreError, ClientRow, PendingRequest, Token
from .connections import Connections

TOKEN_PREFIX = "brain_"
OAUTH_PREFIX = "oauth:"
RESERVED_NAMES = {"local", "remote"}
SCOPES = ("read", "write")
PENDING_TTL_S = 600
# a registration never approved lapses in minutes, as on the embedded store (daemon/http/oauth_store.py):
# a flood of registrations cannot hold the slots for a day (docs/protocol.md §11.5)
UNAPPROVED_CLIENT_TTL_S = 15 * 60
MAX_CLIENTS = 100
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"   # no 0/O/1/I: the owner reads it out

_LIVE_CLIENT = "(c.expires_at IS NULL OR c.expires_at >= %s)"
_CLIENTS = f"""
SELECT c.client_id, c.name, c.info->>'scope', c.surface, c.surface_set_by, c.created_at,
       ARRAY(SELECT DISTINCT s FROM oauth_grants g, jsonb_array_elements_text(g.grant_row->'scopes') s
             WHERE g.client_id = c.client_id AND g.kind IN ('access', 'refresh') AND g.expires_at >= %s)
FROM oauth_clients c WHERE {_LIVE_CLIENT} ORDER BY c.created_at, c.client_id
"""
_WAITING = f"""
SELECT p.user_code, p.client_id, c.name, p.scopes FROM oauth_pending p JOIN oauth_clients c USING (client_id)
WHERE NOT p.approved AND NOT p.denied AND p.expires_at >= %s AND {_LIVE_CLIENT}
"""


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def normalize_user_code(code: str) -> str:
    raw = "".join(c for c in code.upper() if c.isalnum())
    return f"{raw[:4]}-{raw[4:]}"


def _new_user_code() -> str:
    raw = "".join(secrets.choice(_USER_CODE_ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def _scope_text(scopes: list[str] | tuple[str, ...]) -> str:
    return " ".join(s for s in SCOPES if s in set(scopes))


class PgAuthStore:
    """Tokens and OAuth clients of one brain in a PostgreSQL database, shared by every front end."""

    def __init__(self, dsn: str, *, connections: Connections | None = None):
        self.connections = connections or Connections(dsn)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        try:
            with self.connections.borrow() as conn:
                yield conn
        except psycopg.OperationalError as e:
            raise AuthStoreError("the tokens and OAuth clients are kept in PostgreSQL, which cannot be reached; "
                                 "check that the database server is up and the store URL is right") from e

    # -- bearer tokens -----------------------------------------------------------

    def create_token(self, name: str, *, can_write: bool) -> str:
        if not _NAME_RE.match(name or ""):
            raise AuthStoreError(f"token name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-'")
        if name in RESERVED_NAMES:
            raise AuthStoreError(f"{name!r} is reserved for another lane; pick another name")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._conn() as conn:
            added = conn.execute("INSERT INTO auth_tokens (name, sha256, scope, created_at) VALUES (%s, %s, %s, %s) "
                                 "ON CONFLICT (name) DO NOTHING",
                                 (name, hash_secret(secret), "write" if can_write else "read", now_iso())).rowcount
        if not added:
            raise AuthStoreError(f"a token named {name!r} exists; revoke it first "
                                 f"(`brain auth token revoke {name}`) or choose another name")
        return secret

    @staticmethod
    def _token(row: tuple[str, str, str, str | None, str | None]) -> Token:
        name, scope, created_at, surface, set_by = row
        return Token(name, scope == "write", created_at, surface if surface in SURFACE_ORDER else None, set_by)

    def tokens(self) -> list[Token]:
        with self._conn() as conn:
            rows = conn.execute("SELECT name, scope, created_at, surface, surface_set_by FROM auth_tokens "
                                "ORDER BY created_at, name").fetchall()
        return [self._token(r) for r in rows]

    def revoke_token(self, name: str) -> bool:
        with self._conn() as conn:
            return conn.execute("DELETE FROM auth_tokens WHERE name = %s", (name,)).rowcount > 0

    def check_token(self, secret: str | None) -> Token | None:
        if not secret:
            return None
        try:
            with self._conn() as conn:
                row = conn.execute("SELECT name, scope, created_at, surface, surface_set_by FROM auth_tokens "
                                   "WHERE sha256 = %s", (hash_secret(secret),)).fetchone()
        except (AuthStoreError, psycopg.Error):
            return None   # a store that cannot be read admits no one
        return self._token(row) if row else None

    # -- clients -------------------------------------------------------------------

    def clients(self, ceiling: str) -> list[ClientRow]:
        rows = []
        for t in self.tokens():
            scopes = "read write" if t.can_write else "read"
            rows.append(ClientRow(t.name, "token", t.name, scopes, scopes, t.surface, t.surface_set_by,
                                  effective_surface(ceiling, t.surface), t.created_at))
        now = time.time()
        with self._conn() as conn:
            found = conn.execute(_CLIENTS, (now, now)).fetchall()
        for cid, name, asked, surface, set_by, created_at, granted in found:
            rows.append(ClientRow(OAUTH_PREFIX + cid, "oauth", name, _scope_text(list(granted)), asked or "read",
                                  surface, set_by, effective_surface(ceiling, surface), created_at))
        return rows

    def set_client_surface(self, client_id: str, surface: str | None, set_by: str) -> bool:
        if surface is not None and surface not in SURFACE_ORDER:
            raise InvalidParams(f"unknown surface {surface!r}", f"Use one of {', '.join(SURFACE_ORDER)}.")
        set_by_kept = set_by if surface else None
        with self._conn() as conn:
            if client_id.startswith(OAUTH_PREFIX):
                cur = conn.execute("UPDATE oauth_clients SET surface = %s, surface_set_by = %s WHERE client_id = %s",
                                   (surface, set_by_kept, client_id[len(OAUTH_PREFIX):]))
            else:
                cur = conn.execute("UPDATE auth_tokens SET surface = %s, surface_set_by = %s WHERE name = %s",
                                   (surface, set_by_kept, client_id))
            return cur.rowcount > 0

    def revoke_oauth_client(self, client_id: str) -> bool:
        if not client_id.startswith(OAUTH_PREFIX):
            return False
        with self._conn() as conn:
            # its waiting requests and its grants go with it (ON DELETE CASCADE)
            return conn.execute("DELETE FROM oauth_clients WHERE client_id = %s",
                                (client_id[len(OAUTH_PREFIX):],)).rowcount > 0

    # -- requests waiting for the owner ---------------------------------------------

    def pending(self) -> list[PendingRequest]:
        now = time.time()
        with self._conn() as conn:
            rows = conn.execute(_WAITING + " ORDER BY p.expires_at", (now, now)).fetchall()
        return [PendingRequest(code, cid, name, tuple(scopes)) for code, cid, name, scopes in rows]

    def approve(self, user_code: str, *, read_only: bool = False) -> PendingRequest | None:
        now = time.time()
        with self._conn() as conn, conn.transaction():
            row = conn.execute(_WAITING + " AND p.user_code = %s FOR UPDATE OF p",
                               (now, now, normalize_user_code(user_code))).fetchone()
            if row is None:
                return None
            code, cid, name, scopes = row
            if read_only:
                scopes = [s for s in scopes if s != "write"]
            conn.execute("UPDATE oauth_pending SET approved = true, scopes = %s WHERE user_code = %s", (scopes, code))
            # approved: the client is kept until revoked
            conn.execute("UPDATE oauth_clients SET expires_at = NULL WHERE client_id = %s", (cid,))
        return PendingRequest(code, cid, name, tuple(scopes))

    def deny(self, user_code: str) -> bool:
        with self._conn() as conn:
            return conn.execute("UPDATE oauth_pending SET denied = true WHERE user_code = %s",
                                (normalize_user_code(user_code),)).rowcount > 0

    # -- what the OAuth flow records (the provider's side; the contract only reads it) --

    def add_client(self, client_id: str, name: str, info: dict[str, object]) -> None:
        """Register a client; it lapses unless the owner approves one of its requests in time."""
        now = time.time()
        with self._conn() as conn:
            conn.execute("DELETE FROM oauth_clients WHERE expires_at < %s", (now,))
            counted = conn.execute("SELECT COUNT(*) FROM oauth_clients").fetchone()
            live = int(counted[0]) if counted else 0
            if live >= MAX_CLIENTS:
                # the oldest registration never approved and with no request awaiting the owner makes
                # room: a flood only ever displaces its own, never a client the owner approved or is about to
                gone = conn.execute(
                    "DELETE FROM oauth_clients WHERE client_id IN (SELECT c.client_id FROM oauth_clients c "
                    "WHERE c.expires_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM oauth_pending p WHERE "
                    "p.client_id = c.client_id AND NOT p.approved AND NOT p.denied AND p.expires_at >= %s) "
                    "ORDER BY c.expires_at LIMIT %s)", (now, live - MAX_CLIENTS + 1)).rowcount
                if gone < live - MAX_CLIENTS + 1:
                    raise AuthStoreError(
                        f"this server already holds its limit of {MAX_CLIENTS} registered OAuth clients, each "
                        "approved or awaiting the owner; the vault's owner removes unused ones (`brain auth "
                        "clients`, then `brain auth revoke-client ID`); registrations never approved expire "
                        f"after {UNAPPROVED_CLIENT_TTL_S // 60} minutes")
            conn.execute("INSERT INTO oauth_clients (client_id, name, info, created_at, expires_at) "
                         "VALUES (%s, %s, %s, %s, %s)",
                         (client_id, name, Jsonb(info), now_iso(), now + UNAPPROVED_CLIENT_TTL_S))

    def add_pending(self, client_id: str, scopes: list[str], fields: dict[str, object] | None = None) -> tuple[str, str]:
        """Record an authorization request awaiting the owner; (request id, user code)."""
        request_id = secrets.token_urlsafe(24)
        with self._conn() as conn:
            for _attempt in range(8):
                added = conn.execute("INSERT INTO oauth_pending (request_sha256, user_code, client_id, scopes, "
                                     "fields, expires_at) VALUES (%s, %s, %s, %s, %s, %s) "
                                     "ON CONFLICT (user_code) DO NOTHING RETURNING user_code",
                                     (hash_secret(request_id), _new_user_code(), client_id, list(scopes),
                                      Jsonb(fields or {}), time.time() + PENDING_TTL_S)).fetchone()
                if added:
                    return request_id, str(added[0])
        raise AuthStoreError("no free user code for the request; retry it")

    def close(self) -> None:
        self.connections.close()
