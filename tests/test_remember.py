"""remember: docs/protocol.md §3.2, §4.1 and the §10 remember list."""

from brain.indexer.vault.visibility import Viewer
import datetime as dt

import pytest

from conftest import call
from vectors_fixtures import minilm  # noqa: F401  (fixture)

from brain.indexer.vault.timestamps import utcnow
from brain.daemon.protocol.timeparse import parse_iso
from brain.daemon.verbs import steps


def test_inserted_with_null_entity_and_null_valid_until(engine, remote):
    body, err = call(engine, "remember", {"fact": "The sky is blue", "provenance": "test"}, remote)
    assert not err
    assert body["status"] == "inserted"
    # the first id in this device's slot (docs/architecture.md, "Two devices, one vault")
    assert body["id"] == str((1 << 20) + engine.facts.slot) and isinstance(body["id"], str)
    assert "entity_slug" in body and body["entity_slug"] is None
    assert "valid_until" in body and body["valid_until"] is None
    assert body["protocol_version"] == 1
    assert body["status_text"] == f"remembered as fact #{body['id']}"


def test_missing_provenance_is_invalid_params_not_provenance_required(engine, remote):
    body, err = call(engine, "remember", {"fact": "x"}, remote)
    assert err and body["error"] == "invalid_params"
    assert body["message"] == "Missing required parameter: provenance"
    assert body["protocol_version"] == 1


def test_null_provenance_is_invalid_params(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": None}, remote)
    assert err and body["error"] == "invalid_params"


def test_blank_provenance_is_provenance_required_with_fix(engine, remote):
    for blank in ("", "   ", "\t\n"):
        body, err = call(engine, "remember", {"fact": "x", "provenance": blank}, remote)
        assert err and body["error"] == "provenance_required", blank
        assert body["suggestion"].strip()


def test_provenance_over_500_chars_is_invalid_params(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": "p" * 501}, remote)
    assert err and body["error"] == "invalid_params"
    assert "500" in body["message"] and body["suggestion"]
    ok, err = call(engine, "remember", {"fact": "x", "provenance": " " + "p" * 500 + " "}, remote)
    assert not err, ok


def test_empty_fact_is_invalid_params(engine, remote):
    body, err = call(engine, "remember", {"fact": "  ", "provenance": "t"}, remote)
    assert err and body["error"] == "invalid_params" and body["suggestion"]


def test_iso_duration_ttl_rejected_with_shorthand_rewrite(engine, remote):
    for ttl, short in (("P30D", "30d"), ("PT12H", "12h"), ("p7d", "7d")):
        body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": ttl}, remote)
        assert err and body["error"] == "invalid_params"
        assert f'"{short}"' in body["suggestion"], body


def test_unparseable_ttl_rejected(engine, remote):
    for ttl in ("1w", "soon", "3 fortnights"):
        body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": ttl}, remote)
        assert err and body["error"] == "invalid_params", ttl
        assert "Cannot parse ttl" in body["message"] and body["suggestion"]


def test_shorthand_ttl_gives_future_valid_until(engine, remote):
    before = utcnow()
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": "30d"}, remote)
    assert not err
    until = parse_iso(body["valid_until"])
    assert dt.timedelta(days=29, hours=23) < until - before < dt.timedelta(days=30, minutes=1)
    assert body["valid_until"].endswith("Z") and len(body["valid_until"]) == 24


def test_absolute_ttl_accepted_even_in_the_past(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": "2020-01-01"}, remote)
    assert not err and body["valid_until"] == "2020-01-01T00:00:00.000Z"


def test_enum_violations_are_invalid_params(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "kind": "rumour"}, remote)
    assert err and body["error"] == "invalid_params"
    assert body["message"] == 'Parameter "kind" must be one of: event, preference, commitment, belief, fact'
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "visibility": "secret"}, remote)
    assert err and body["error"] == "invalid_params"


def test_wrong_type_is_invalid_params_without_coercion(engine, remote):
    body, err = call(engine, "remember", {"fact": 42, "provenance": "t"}, remote)
    assert err and body["message"] == 'Parameter "fact" must be a string'


def test_optional_null_and_empty_string_mean_absent(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": "", "entity": None,
                                          "kind": None, "visibility": ""}, remote)
    assert not err and body["entity_slug"] is None and body["valid_until"] is None


def test_same_text_same_entity_is_duplicate_with_existing_id(engine, remote):
    a, _ = call(engine, "remember", {"fact": "Alice likes tea", "provenance": "t", "entity": "people/alice"}, remote)
    b, _ = call(engine, "remember", {"fact": "  alice LIKES   tea ", "provenance": "t2", "entity": "people/alice"}, remote)
    assert b["status"] == "duplicate" and b["id"] == a["id"]
    assert b["status_text"] == f"already knew this — kept fact #{a['id']}"
    c, _ = call(engine, "remember", {"fact": "Alice likes tea", "provenance": "t", "entity": "people/bob"}, remote)
    assert c["status"] == "inserted"


def test_no_entity_is_never_deduped(engine, remote):
    a, _ = call(engine, "remember", {"fact": "same", "provenance": "t"}, remote)
    b, _ = call(engine, "remember", {"fact": "same", "provenance": "t"}, remote)
    assert a["status"] == b["status"] == "inserted" and a["id"] != b["id"]


def test_without_model_degraded_dedup_is_true_never_false(engine, remote):
    body, _ = call(engine, "remember", {"fact": "x", "provenance": "t"}, remote)
    assert body["degraded_dedup"] is True


def test_entity_canonicalized_identically_for_remember_and_recall(engine, remote):
    body, _ = call(engine, "remember", {"fact": "x", "provenance": "t", "entity": "People/Conformance Run X"}, remote)
    assert body["entity_slug"] == "people/conformance-run-x"
    r, _ = call(engine, "recall", {"entity": "people/conformance-run-x"}, remote)
    assert [f["fact"] for f in r["facts"]] == ["x"]


def test_dry_run_writes_nothing(engine, remote):
    body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "dry_run": True}, remote)
    assert not err and body["dry_run"] is True and body["action"] == "remember"
    assert engine.facts.counts(Viewer.owner())["facts"] == 0


def test_provenance_stored_verbatim_trimmed(engine, local):
    call(engine, "remember", {"fact": "x", "provenance": "  chat 2026-06-12 "}, local)
    r, _ = call(engine, "recall", {}, local)
    assert r["facts"][0]["provenance"] == "chat 2026-06-12" == r["facts"][0]["source"]


def test_remote_duplicate_check_never_reveals_a_private_fact(engine, local, remote):
    secret, err = call(engine, "remember", {"fact": "Zed is ill", "provenance": "t", "entity": "people/zed",
                                            "visibility": "private"}, local)
    assert not err
    body, err = call(engine, "remember", {"fact": "zed IS ill", "provenance": "t", "entity": "people/zed"}, remote)
    assert not err
    # a duplicate answer would hand the remote caller the private fact's id
    assert body["status"] == "inserted" and body["id"] != secret["id"]
    body, _ = call(engine, "remember", {"fact": "zed is ill", "provenance": "t", "entity": "people/zed"}, local)
    assert body["status"] == "duplicate"  # the trusted lane still dedups against everything


def test_a_non_string_session_id_cannot_wedge_the_facts_store(engine, local):
    # session_id is declared (a string), so the dispatch check refuses anything else (docs/protocol.md §1.4)
    body, err = call(engine, "remember", {"fact": "a", "provenance": "t", "session_id": {"x": 1}}, local)
    assert err and body["error"] == "invalid_params" and "session_id" in body["message"], body
    body, err = call(engine, "remember", {"fact": "b", "provenance": "t"}, local)
    assert not err and body["status"] == "inserted", body
    body, _ = call(engine, "recall", {}, local)
    assert [f["fact"] for f in body["facts"]] == ["b"]
    assert all(f["source_session"] is None for f in body["facts"])


def test_ttl_too_far_or_out_of_range_is_invalid_params(engine, local):
    for ttl in ("99999999999999d", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"):
        body, err = call(engine, "remember", {"fact": "x", "provenance": "t", "ttl": ttl}, local)
        assert err and body["error"] == "invalid_params", (ttl, body)
        assert body["suggestion"]


@pytest.mark.model
def test_remote_similarity_dedup_never_touches_a_private_fact(vault, places, minilm, local, remote):
    from brain.daemon.server.vault_engine import VaultEngine

    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.load_models(background=False, embedder=minilm)
        args = {"provenance": "t", "entity": "people/zed"}
        secret, _ = call(e, "remember", {**args, "fact": "Zed's phone number is 555-0100",
                                         "visibility": "private"}, local)
        body, err = call(e, "remember", {**args, "fact": "Zed's phone number is 555-0199"}, remote)
        assert not err and body["status"] == "inserted" and body["id"] != secret["id"], body
        assert e.facts.get(int(secret["id"]), Viewer.owner())["expired_at"] is None  # not superseded by a remote write
    finally:
        e.close()


def test_remote_similarity_still_finds_the_world_fact_behind_a_private_one(vault, places, minilm, local, remote):
    # the nearest fact overall is private; a remote write must be compared
    # with the world facts it may see, not dropped after the private match
    from brain.daemon.server.vault_engine import VaultEngine

    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.load_models(background=False, embedder=minilm)
        args = {"provenance": "t", "entity": "people/zed"}
        world, _ = call(e, "remember", {**args, "fact": "Zed works at Acme Robotics in Berlin"}, local)
        # stored directly: through remember it would be a duplicate of the world fact
        secret = e.facts.insert(fact="Zed works at Acme Robotics, Berlin", kind="belief", entity_slug="people/zed",
                                visibility="private", source="t", valid_until=None)
        steps.keep_fact_vector(e, secret, "Zed works at Acme Robotics, Berlin")
        body, err = call(e, "remember", {**args, "fact": "Zed works at Acme Robotics, Berlin"}, remote)
        assert not err and body["status"] == "superseded", body
        assert e.facts.get(int(world["id"]), Viewer.owner())["superseded_by"] == int(body["id"])
    finally:
        e.close()


def test_concurrent_remembers_never_share_an_id(engine, local):
    import json
    import threading

    ids, errors = [], []

    def writer(k):
        for i in range(25):
            body, err = call(engine, "remember", {"fact": f"fact {k}-{i}", "provenance": "t",
                                                  "entity": f"people/p{i % 3}"}, local)
            (errors if err else ids).append(body if err else body["id"])
            call(engine, "recall", {"entity": f"people/p{i % 3}"}, local)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ids) == 100 and len(set(ids)) == 100
    from conftest import facts_log_lines

    logged = [json.loads(line)["id"] for line in facts_log_lines(engine.vault)]
    assert sorted(logged) == sorted(int(i) for i in ids)
