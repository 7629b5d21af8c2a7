"""What OAuth for `brain serve --http` keeps: clients, approvals, codes, tokens.

One JSON file in the state dir (0600, edited under an flock, replaced
atomically). Every secret in it — pending-request ids, authorization codes,
access and refresh tokens — is stored as its sha256 only; the plain value
exists once, in the answer that hands it out. Clients are public (PKCE, no
client secret): they are agent harnesses on other machines that cannot keep
a secret, and the vault owner's approval is what admits them.

Lifetimes: a pending request lives `PENDING_TTL_S` (the owner approves
within it), a code `CODE_TTL_S`, an access token `ACCESS_TTL_S` (short:
refresh tokens renew it), a refresh token `REFRESH_TTL_S`, rotated on use.
A spent refresh token's hash is kept until it would have expired: when it
is presented again, someone holds a copy, so the whole grant (every access
and refresh token of that authorization) is revoked, and its holder
connects again through the owner's approval (docs/protocol.md §11.5).
Revoking a client drops every token it holds; a revoked token or client is
refused from the next request (the HTTP server re-reads the file when it
changes).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from .tokens import hash_secret
from ...indexer.vault.timestamps import now_iso
from .state_file import CachedJson, StateFileError, editing, load_json, save_json
from ..protocol.surfaces import SURFACE_ORDER
from ..stores.auth import AuthStoreError

PENDING_TTL_S = 600
CODE_TTL_S = 300
ACCESS_TTL_S = 3600
REFRESH_TTL_S = 30 * 24 * 3600
SCOPES = ("read", "write")
# bounds on what strangers can make the store hold (oauth_guard): registered
# clients, requests awaiting the owner, and how long a registration the
# owner never approved is kept. A real client asks for approval right after
# it registers, and its request then keeps it (add_pending), so minutes are
# enough; a day let a finished flood keep every slot for 24 hours.
MAX_CLIENTS = 100
MAX_PENDING = 20
UNAPPROVED_CLIENT_TTL_S = 15 * 60
# what the owner reads out and types: no 0/O/1/I, 8 characters (~40 bits, valid 10 minutes)
_USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
_KINDS = ("clients", "pending", "codes", "access", "refresh", "spent")


class OAuthStoreError(AuthStoreError):
    pass


class OAuthStoreFull(OAuthStoreError):
    """A bound on what strangers can add was reached; `fix` says what frees room."""

    def __init__(self, message: str, fix: str):
        super().__init__(f"{message}; {fix}")
        self.message, self.fix = message, fix


@dataclass(frozen=True)
class Grant:
    """A live access or refresh token, as the server sees it."""

    client_id: str
    scopes: tuple[str, ...]
    expires_at: int
    resource: str | None
    family: str  # every token of one authorization shares it: revoking one revokes them all


def oauth_file(places) -> Path:
    return places.state_dir / "oauth.json"


def _empty() -> dict:
    return {k: {} for k in _KINDS}


def _norm(data) -> dict:
    out = _empty()
    if isinstance(data, dict):
        for k in _KINDS:
            if isinstance(data.get(k), dict):
                out[k] = data[k]
    return out


def new_user_code() -> str:
    raw = "".join(secrets.choice(_USER_CODE_ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def normalize_user_code(code: str) -> str:
    raw = "".join(c for c in code.upper() if c.isalnum())
    return f"{raw[:4]}-{raw[4:]}"


class OAuthStore:
    def __init__(self, places):
        self.path = oauth_file(places)
        self._cache = CachedJson(self.path, _empty())

    # -- reading -----------------------------------------------------------
    def snapshot(self) -> dict:
        """The current content (cached by mtime); raises OAuthStoreError when unreadable."""
        try:
            return _norm(self._cache.get())
        except StateFileError as e:
            raise OAuthStoreError(f"{e}; delete it to forget every OAuth client") from None

    def client(self, client_id: str) -> dict | None:
        return self.snapshot()["clients"].get(client_id)

    def grant(self, kind: str, secret: str) -> Grant | None:
        """A live access or refresh token by its plain value; None when unknown, expired or orphaned."""
        snap = self.snapshot()
        row = snap[kind].get(hash_secret(secret))
        if row is None or row["client_id"] not in snap["clients"] or row["expires_at"] < time.time():
            return None
        return Grant(row["client_id"], tuple(row["scopes"]), int(row["expires_at"]), row.get("resource"),
                     row["family"])

    # -- writing -----------------------------------------------------------
    def edit(self):
        """Context manager yielding the content to change; saved when the block ends without error."""
        store = self

        class _Edit:
            def __enter__(self):
                self._lock = editing(store.path)
                self._lock.__enter__()
                try:
                    self.data = _norm(load_json(store.path, _empty()))
                except StateFileError as e:
                    self._lock.__exit__(None, None, None)
                    raise OAuthStoreError(f"{e}; delete it to forget every OAuth client") from None
                _drop_expired(self.data)
                return self.data

            def __exit__(self, kind, exc, tb):
                try:
                    if kind is None:
                        save_json(store.path, self.data)
                finally:
                    self._lock.__exit__(kind, exc, tb)
                return False

        return _Edit()

    def add_client(self, client_id: str, name: str, info: dict) -> None:
        """Register a client; it expires unless the owner approves one of its requests in time.

        When MAX_CLIENTS are registered, the oldest registration that was never
        approved and has no request awaiting the owner makes room: a flood of
        registrations only ever displaces its own, never a client the owner
        approved or is about to (docs/protocol.md §11.5). OAuthStoreFull when
        no registration can go.
        """
        with self.edit() as d:
            if len(d["clients"]) >= MAX_CLIENTS and not _evict_unapproved(d):
                raise OAuthStoreFull(
                    f"this server already holds its limit of {MAX_CLIENTS} registered OAuth clients, "
                    "each approved or awaiting the owner",
                    "the vault's owner removes unused ones (`brain auth clients`, then "
                    "`brain auth revoke-client ID`); registrations never approved expire after "
                    f"{UNAPPROVED_CLIENT_TTL_S // 60} minutes")
            d["clients"][client_id] = {"name": name, "created_at": now_iso(), "info": info,
                                       "surface": None, "surface_set_by": None,
                                       "expires_at": time.time() + UNAPPROVED_CLIENT_TTL_S}

    def add_pending(self, client_id: str, fields: dict) -> tuple[str, str]:
        """Record an authorization request awaiting the owner; (request id, user code).
        OAuthStoreFull when MAX_PENDING requests are waiting."""
        request_id = secrets.token_urlsafe(24)
        with self.edit() as d:
            if len(d["pending"]) >= MAX_PENDING:
                raise OAuthStoreFull(
                    f"{MAX_PENDING} authorization requests already await the owner's decision",
                    f"retry once the owner has approved or denied them (`brain auth pending`), or after "
                    f"{PENDING_TTL_S // 60} minutes, when unanswered requests expire")
            codes = {p["user_code"] for p in d["pending"].values()}
            user_code = new_user_code()
            while user_code in codes:
                user_code = new_user_code()
            expires_at = time.time() + PENDING_TTL_S
            d["pending"][hash_secret(request_id)] = {
                **fields, "client_id": client_id, "user_code": user_code, "approved": False,
                "expires_at": expires_at}
            client = d["clients"].get(client_id)
            if client is not None and "expires_at" in client:
                # a registration outlives the request awaiting the owner, so approving it finds the client
                client["expires_at"] = max(client["expires_at"], expires_at + CODE_TTL_S)
        return request_id, user_code

    def approve(self, user_code: str, *, read_only: bool = False) -> dict | None:
        """The owner's approval of a pending request by its code; the request, or None."""
        want = normalize_user_code(user_code)
        with self.edit() as d:
            for row in d["pending"].values():
                if row["user_code"] == want and row["client_id"] in d["clients"]:
                    row["approved"] = True
                    d["clients"][row["client_id"]].pop("expires_at", None)  # approved: kept until revoked
                    if read_only:
                        row["scopes"] = [s for s in row["scopes"] if s != "write"]
                    return dict(row, client_name=d["clients"][row["client_id"]]["name"])
        return None

    def deny(self, user_code: str) -> bool:
        want = normalize_user_code(user_code)
        with self.edit() as d:
            for row in d["pending"].values():
                if row["user_code"] == want:
                    row["denied"] = True
                    return True
        return False

    def pending(self) -> list[dict]:
        """Requests waiting for the owner (for `brain auth pending`)."""
        snap = self.snapshot()
        return [dict(r, client_name=snap["clients"].get(r["client_id"], {}).get("name", "?"))
                for r in snap["pending"].values() if not r.get("approved") and not r.get("denied")]

    def take_decided(self, request_id: str) -> tuple[str, dict | None]:
        """('approved' | 'denied', request) once decided (then consumed); ('waiting', request); ('unknown', None)."""
        key = hash_secret(request_id)
        seen = self.snapshot()["pending"].get(key)
        if seen is not None and not seen["approved"] and not seen.get("denied") and seen["expires_at"] > time.time():
            return "waiting", seen  # a poll that changes nothing writes nothing
        with self.edit() as d:
            row = d["pending"].get(key)
            if row is None:
                return "unknown", None
            if row.get("denied") or row["approved"]:
                del d["pending"][key]
                return ("denied" if row.get("denied") else "approved"), row
            return "waiting", row

    def add_code(self, row: dict) -> str:
        code = secrets.token_urlsafe(32)
        with self.edit() as d:
            d["codes"][hash_secret(code)] = {**row, "expires_at": time.time() + CODE_TTL_S}
        return code

    def code(self, code: str) -> dict | None:
        return self.snapshot()["codes"].get(hash_secret(code))

    def issue(self, client_id: str, scopes: list[str], resource: str | None, *, family: str | None = None,
              spend_code: str | None = None, spend_refresh: str | None = None) -> tuple[str, str, int]:
        """New access + refresh tokens; the code or refresh token they replace is spent in the same write.
        A refresh token spent before revokes its whole grant instead (see `replayed`)."""
        access, refresh = "bat_" + secrets.token_urlsafe(32), "brt_" + secrets.token_urlsafe(32)
        family = family or secrets.token_hex(8)
        now = time.time()
        replay = False
        with self.edit() as d:
            if spend_code is not None and d["codes"].pop(hash_secret(spend_code), None) is None:
                raise OAuthStoreError("the authorization code was already used")
            if spend_refresh is not None:
                key = hash_secret(spend_refresh)
                old = d["refresh"].pop(key, None)
                if old is not None:
                    d["spent"][key] = {k: old[k] for k in ("client_id", "family", "expires_at")}
                    # the access tokens of the old refresh token end with it
                    _drop_family(d, family, keep_refresh=True)
                elif key in d["spent"]:  # two presentations of one token raced here
                    _drop_family(d, d["spent"][key]["family"])
                    replay = True
                else:
                    raise OAuthStoreError("the refresh token was revoked")
            if not replay:
                if client_id not in d["clients"]:
                    raise OAuthStoreError("the client was revoked")
                base = {"client_id": client_id, "scopes": list(scopes), "resource": resource, "family": family,
                        "issued_at": now_iso()}
                d["access"][hash_secret(access)] = {**base, "expires_at": int(now + ACCESS_TTL_S)}
                d["refresh"][hash_secret(refresh)] = {**base, "expires_at": int(now + REFRESH_TTL_S)}
        if replay:
            raise OAuthStoreError("the refresh token was already used: its grant is revoked")
        return access, refresh, ACCESS_TTL_S

    def replayed(self, refresh_token: str) -> bool:
        """True when this refresh token was spent already; then its whole grant is revoked now."""
        key = hash_secret(refresh_token)
        if key not in self.snapshot()["spent"]:
            return False
        with self.edit() as d:
            row = d["spent"].get(key)
            if row is None:
                return False
            _drop_family(d, row["family"])
        return True

    def revoke_family(self, family: str) -> None:
        with self.edit() as d:
            _drop_family(d, family)

    def revoke_client(self, client_id: str) -> bool:
        with self.edit() as d:
            if d["clients"].pop(client_id, None) is None:
                return False
            for kind in ("pending", "codes", "access", "refresh", "spent"):
                for key in [k for k, r in d[kind].items() if r.get("client_id") == client_id]:
                    del d[kind][key]
        return True

    def set_surface(self, client_id: str, surface: str | None, set_by: str) -> bool:
        if surface is not None and surface not in SURFACE_ORDER:
            raise OAuthStoreError(f"unknown surface {surface!r}")
        with self.edit() as d:
            row = d["clients"].get(client_id)
            if row is None:
                return False
            row["surface"], row["surface_set_by"] = surface, set_by if surface else None
        return True


def _drop_family(d: dict, family: str, keep_refresh: bool = False) -> None:
    for kind in ("access",) if keep_refresh else ("access", "refresh"):
        for key in [k for k, r in d[kind].items() if r.get("family") == family]:
            del d[kind][key]


def _evict_unapproved(d: dict) -> bool:
    """Drop the oldest registration never approved and with no request awaiting the owner; False when none."""
    waiting = {r["client_id"] for r in d["pending"].values() if not r.get("approved") and not r.get("denied")}
    candidates = [(r["expires_at"], k) for k, r in d["clients"].items()
                  if isinstance(r, dict) and "expires_at" in r and k not in waiting]
    if not candidates:
        return False
    del d["clients"][min(candidates)[1]]
    return True


def _drop_expired(d: dict) -> None:
    now = time.time()
    # only a registration never approved carries expires_at
    for key in [k for k, r in d["clients"].items() if isinstance(r, dict) and r.get("expires_at", now) < now]:
        del d["clients"][key]
    for kind in ("pending", "codes", "access", "refresh", "spent"):
        for key in [k for k, r in d[kind].items() if r.get("expires_at", 0) < now]:
            del d[kind][key]
