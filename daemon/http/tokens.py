"""Bearer tokens for `brain serve --http`.

A token is shown once, at creation; the state dir keeps only its sha256, its
name (which namespaces the holder's delta cursors) and its scope (read, or
read + write). Checking a token hashes it and compares against every stored
hash in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from pathlib import Path

from ...indexer.vault.timestamps import now_iso
from .state_file import CachedJson, StateFileError, editing, load_json, save_json
from ..protocol.surfaces import SURFACE_ORDER
from ..stores.auth import AuthStoreError, Token

TOKEN_PREFIX = "brain_"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# cursor namespaces that other lanes use: a token may not impersonate them
RESERVED_NAMES = {"local", "remote"}


class TokenError(AuthStoreError):
    pass


def tokens_file(places) -> Path:
    return places.state_dir / "auth_tokens.json"


def hash_secret(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _load(places) -> list[dict]:
    try:
        data = load_json(tokens_file(places), {})
    except StateFileError as e:
        raise TokenError(f"{e}; fix or delete it, then create tokens again") from None
    rows = data.get("tokens") if isinstance(data, dict) else None
    return [r for r in rows or [] if isinstance(r, dict) and "name" in r and "sha256" in r]


def _save(places, rows: list[dict]) -> None:
    save_json(tokens_file(places), {"tokens": rows})


def _editing(places):
    return editing(tokens_file(places))


def _token(row: dict) -> Token:
    surface = row.get("surface") if row.get("surface") in SURFACE_ORDER else None
    return Token(row["name"], row.get("scope") == "write", row.get("created_at", "?"), surface,
                 row.get("surface_set_by"))


def create_token(places, name: str, *, can_write: bool) -> str:
    """Create a token and return its secret (the only time it is visible)."""
    if not _NAME_RE.match(name or ""):
        raise TokenError(f"token name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-'")
    if name in RESERVED_NAMES:
        raise TokenError(f"{name!r} is reserved for another lane; pick another name")
    with _editing(places):
        rows = _load(places)
        if any(r["name"] == name for r in rows):
            raise TokenError(f"a token named {name!r} exists; revoke it first (`brain auth token revoke {name}`) "
                             "or choose another name")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        rows.append({"name": name, "sha256": hash_secret(secret), "scope": "write" if can_write else "read",
                     "created_at": now_iso()})
        _save(places, rows)
    return secret


def list_tokens(places) -> list[Token]:
    return [_token(r) for r in _load(places)]


def revoke_token(places, name: str) -> bool:
    with _editing(places):
        rows = _load(places)
        kept = [r for r in rows if r["name"] != name]
        if len(kept) == len(rows):
            return False
        _save(places, kept)
    return True


def set_token_surface(places, name: str, surface: str | None, set_by: str) -> bool:
    """Narrow (or, for the operator, reset) one token's surface; False when no such token."""
    with _editing(places):
        rows = _load(places)
        row = next((r for r in rows if r["name"] == name), None)
        if row is None:
            return False
        row["surface"], row["surface_set_by"] = surface, set_by if surface else None
        _save(places, rows)
    return True


class TokenChecker:
    """Verifies bearer tokens; re-reads the file when it changes (revocations apply at once)."""

    def __init__(self, places):
        self.file = CachedJson(tokens_file(places), {})

    def check(self, secret: str | None) -> Token | None:
        if not secret:
            return None
        try:
            data = self.file.get()
        except StateFileError:
            return None
        rows = data.get("tokens") if isinstance(data, dict) else None
        digest = hash_secret(secret)
        found = None
        for r in rows or []:
            # compare against every row: timing says nothing about which matched
            if isinstance(r, dict) and hmac.compare_digest(digest, str(r.get("sha256"))):
                found = r
        return _token(found) if found is not None and "name" in found else None
