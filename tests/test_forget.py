"""forget: docs/protocol.md §3.5 and the §10 forget list."""

from brain.indexer.vault.visibility import Viewer
from conftest import call


def _fact(engine, caller, **kw):
    body, _ = call(engine, "remember", {"fact": kw.pop("fact", "a fact"), "provenance": "t", **kw}, caller)
    return body["id"]


def test_expire_then_idempotent(engine, remote):
    fid = _fact(engine, remote)
    body, err = call(engine, "forget", {"id": fid, "reason": "wrong"}, remote)
    assert not err and body == {"id": fid, "expired": True, "reason": "wrong", "protocol_version": 1}
    body, err = call(engine, "forget", {"id": fid}, remote)
    assert not err and body == {"id": fid, "expired": False, "reason": None, "protocol_version": 1}


def test_forget_keeps_an_audit_record(engine, local):
    fid = _fact(engine, local)
    call(engine, "forget", {"id": fid, "reason": "outdated"}, local)
    from conftest import facts_log_lines

    lines = facts_log_lines(engine.vault)
    assert len(lines) == 2 and '"op":"expire"' in lines[1] and "outdated" in lines[1]
    body, _ = call(engine, "recall", {"include_expired": True}, local)
    assert body["facts"][0]["fact_id"] == fid


def test_unknown_and_malformed_ids_are_not_found(engine, remote):
    for bad in ("999999999", "", "abc", "0", "people/alice", "-3", "1.5", " "):
        body, err = call(engine, "forget", {"id": bad}, remote)
        assert err and body["error"] == "not_found", bad
        assert body["suggestion"].strip() and body["protocol_version"] == 1


def test_numeric_id_fails_the_type_check(engine, remote):
    body, err = call(engine, "forget", {"id": 1}, remote)
    assert err and body["error"] == "invalid_params"
    body, err = call(engine, "forget", {}, remote)
    assert err and body["message"] == "Missing required parameter: id"


def test_remote_cannot_forget_private_fact(engine, remote, local):
    fid = _fact(engine, local, visibility="private")
    body, err = call(engine, "forget", {"id": fid}, remote)
    assert err and body["error"] == "not_found"
    assert engine.facts.get(int(fid), Viewer.owner())["expired_at"] is None
    body, err = call(engine, "forget", {"id": fid}, local)
    assert not err and body["expired"] is True


def test_whitespace_around_id_is_trimmed(engine, remote):
    fid = _fact(engine, remote)
    body, err = call(engine, "forget", {"id": f"  {fid} "}, remote)
    assert not err and body["id"] == fid and body["expired"] is True


def test_ids_beyond_sqlite_range_and_non_ascii_digits_are_not_found(engine, local):
    import json

    # fact #1, as a vault from before device logs has it in its shared facts.jsonl
    (engine.vault / ".brain" / "facts.jsonl").write_text(json.dumps(
        {"op": "insert", "id": 1, "ts": "2026-01-01T00:00:00.000Z", "fact": "a fact", "source": "t"}) + "\n")
    engine.facts.catch_up()
    # "١" is ARABIC-INDIC DIGIT ONE: int() would read it as 1 and forget fact #1
    for bad in ("99999999999999999999999", "\u0661", "\uff11"):
        body, err = call(engine, "forget", {"id": bad}, local)
        assert err and body["error"] == "not_found", (bad, body)
    assert engine.facts.get(1, Viewer.owner())["expired_at"] is None
