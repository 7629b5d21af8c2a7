"""Bearer tokens for `brain serve --http`.

A token is shown once, at creation; the state dir keeps only its sha256, its
name (which namespaces the holder's delta cursors) and its scope (read, or
read + write). Checking a token hashes it and compares against every stored
hash in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..indexer.atomic_files import write_atomic
from .protocol import now_iso

TOKEN_PREFIX = "brain_"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# cursor namespaces that other lanes use: a token may not impersonate them
RESERVED_NAMES = {"local", "remote"}


class TokenError(ValueError):
    pass


@dataclass(frozen=True)
class Token:
    name: str
    can_write: bool
    created_at: str


def tokens_file(places) -> Path:
    return places.state_dir / "auth_tokens.json"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _load(places) -> list[dict]:
    try:
        data = json.loads(tokens_file(places).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise TokenError(f"the token file {tokens_file(places)} is unreadable ({e}); "
                         "fix or delete it, then create tokens again") from None
    rows = data.get("tokens") if isinstance(data, dict) else None
    return [r for r in rows or [] if isinstance(r, dict) and "name" in r and "sha256" in r]


def _save(places, rows: list[dict]) -> None:
    # only hashes are stored, but the file still says which tokens exist: 0600
    write_atomic(tokens_file(places), (json.dumps({"tokens": rows}, indent=2) + "\n").encode(), mode=0o600)


@contextmanager
def _editing(places):
    """Serialize read-modify-write of the token file across processes (flock on a side file)."""
    import fcntl

    path = tokens_file(places).with_suffix(".lock")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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
        rows.append({"name": name, "sha256": _hash(secret), "scope": "write" if can_write else "read",
                     "created_at": now_iso()})
        _save(places, rows)
    return secret


def list_tokens(places) -> list[Token]:
    return [Token(r["name"], r.get("scope") == "write", r.get("created_at", "?")) for r in _load(places)]


def revoke_token(places, name: str) -> bool:
    with _editing(places):
        rows = _load(places)
        kept = [r for r in rows if r["name"] != name]
        if len(kept) == len(rows):
            return False
        _save(places, kept)
    return True


class TokenChecker:
    """Verifies bearer tokens; re-reads the file when it changes (revocations apply at once)."""

    def __init__(self, places):
        self.places = places
        self._mtime: float | None = None
        self._rows: list[dict] = []

    def _refresh(self) -> None:
        try:
            mtime = tokens_file(self.places).stat().st_mtime_ns
        except FileNotFoundError:
            self._rows, self._mtime = [], None
            return
        if mtime != self._mtime:
            self._rows = _load(self.places)
            self._mtime = mtime

    def check(self, secret: str | None) -> Token | None:
        if not secret:
            return None
        try:
            self._refresh()
        except TokenError:
            return None
        digest = _hash(secret)
        found = None
        for r in self._rows:
            # compare against every row: timing says nothing about which matched
            if hmac.compare_digest(digest, str(r["sha256"])):
                found = r
        if found is None:
            return None
        return Token(found["name"], found.get("scope") == "write", found.get("created_at", "?"))
