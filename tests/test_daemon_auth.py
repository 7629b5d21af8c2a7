"""Bearer tokens: shown once, stored hashed, scoped, revocable."""

from __future__ import annotations

import json
import stat

import pytest

from daemon_fixtures import run_brain

from brain.daemon.http.tokens import TokenChecker, TokenError, create_token, list_tokens, revoke_token, tokens_file


def test_tokens_are_stored_hashed_and_checked(places):
    secret = create_token(places, "laptop", can_write=True)
    reader = create_token(places, "phone", can_write=False)
    raw = tokens_file(places).read_text()
    assert secret not in raw and reader not in raw
    assert stat.S_IMODE(tokens_file(places).stat().st_mode) == 0o600
    rows = json.loads(raw)["tokens"]
    assert {r["name"]: r["scope"] for r in rows} == {"laptop": "write", "phone": "read"}
    checker = TokenChecker(places)
    assert checker.check(secret).name == "laptop" and checker.check(secret).can_write
    assert checker.check(reader).can_write is False
    assert checker.check(secret + "x") is None and checker.check("") is None and checker.check(None) is None
    assert revoke_token(places, "laptop")
    assert checker.check(secret) is None  # the file changed: re-read at once
    assert not revoke_token(places, "laptop")
    assert [t.name for t in list_tokens(places)] == ["phone"]


def test_token_names_are_checked(places):
    create_token(places, "ci", can_write=False)
    for bad in ("", "has space", "../x", "local", "remote", "ci"):
        with pytest.raises(TokenError):
            create_token(places, bad, can_write=False)


def test_auth_cli_prints_the_secret_once(places):
    r = run_brain("auth", "token", "create", "agent-1", "--write")
    assert r.returncode == 0
    secret = r.stdout.strip()
    assert secret.startswith("brain_") and "shown only now" in r.stderr
    listed = run_brain("auth", "token", "list")
    assert "agent-1" in listed.stdout and "write" in listed.stdout and secret not in listed.stdout
    assert run_brain("auth", "token", "create", "agent-1").returncode == 1
    assert run_brain("auth", "token", "revoke", "agent-1").returncode == 0
    gone = run_brain("auth", "token", "revoke", "agent-1")
    assert gone.returncode == 1 and "no token named" in gone.stderr


def test_tokens_created_at_once_are_all_kept(places):
    """Concurrent `brain auth token create` runs: no secret is printed for a token that was then lost."""
    import threading

    from brain.daemon.http.tokens import TokenChecker, create_token, list_tokens

    secrets_by_name: dict[str, str] = {}

    def make(i):
        secrets_by_name[f"agent-{i}"] = create_token(places, f"agent-{i}", can_write=False)

    threads = [threading.Thread(target=make, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(t.name for t in list_tokens(places)) == sorted(secrets_by_name)
    checker = TokenChecker(places)
    assert all(checker.check(s).name == n for n, s in secrets_by_name.items())
