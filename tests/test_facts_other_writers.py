"""Other programs write the facts log: a rename over it, an unfinished line, ids reused or out of range.

docs/architecture.md, "When another program writes the log" and "Fact ids".
"""

from __future__ import annotations

import json
import os

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)

from brain.daemon.facts.ids import MAX_ID
from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import FactScope, Order
from brain.indexer.vault.visibility import Viewer


def _insert(store, text):
    return store.insert(fact=text, kind="fact", entity_slug=None, visibility="world", source="t", valid_until=None)


def _facts(store):
    return {r["id"]: r["fact"] for r in store.listed(FactScope(order=Order.ID), Viewer.owner(), None)}


def _ids_in(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


def _replace_by_rename(path, extra: str = ""):
    """What a sync tool, `git pull` or `sed -i` does: write a copy, rename it over the original."""
    tmp = path.with_name(".facts.jsonl.sync-tmp")
    tmp.write_bytes(path.read_bytes() + extra.encode())
    os.replace(tmp, path)


def test_facts_written_after_the_log_is_replaced_by_rename_are_in_the_file_at_the_path(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    acked = [_insert(s, "before")]
    for i in range(3):
        _replace_by_rename(log)
        acked.append(_insert(s, f"after replacement {i}"))
    assert _ids_in(log) == acked  # every acknowledged fact is in the file now at the path
    assert len(set(acked)) == 4
    s.close()
    s = SqliteFactsStore(log, tmp_path / "fresh.sqlite")
    assert sorted(_facts(s)) == acked
    s.close()


def test_a_replacement_that_adds_a_line_is_read_before_the_next_id_is_minted(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    rec = {**json.loads(log.read_text()), "id": 2, "fact": "synced from elsewhere"}
    _replace_by_rename(log, json.dumps(rec) + "\n")
    fid = _insert(s, "mine")
    assert fid == 3 and _facts(s) == {1: "one", 2: "synced from elsewhere", 3: "mine"}
    assert _ids_in(log) == [1, 2, 3]
    s.close()


def test_an_unfinished_line_appended_by_another_program_does_not_swallow_the_next_fact(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    with open(log, "ab") as f:
        f.write(b'{"op":"insert","id":2,"ts":"2026-01-01T00:00:00.000Z","fact":"half writ')
    fid = _insert(s, "acknowledged after the foreign line")
    assert fid != 2  # the unfinished line claimed #2
    lines = log.read_text().splitlines()
    assert [json.loads(line)["fact"] for line in lines] == ["one", "acknowledged after the foreign line"]
    aside = list(tmp_path.glob("facts.jsonl.torn-*"))
    assert aside and b"half writ" in aside[0].read_bytes()  # kept, not deleted
    assert _facts(s)[fid] == "acknowledged after the foreign line"
    s.close()


def test_a_line_reusing_an_id_keeps_both_facts_readable_and_the_same_ids_after_rebuild(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    for text in ("one", "two", "three"):
        _insert(s, text)
    rec = {**json.loads(log.read_text().splitlines()[2]), "fact": "hand-added, reusing 3"}
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")
    s.catch_up()
    got = _facts(s)
    assert got[3] == "three"  # the first line keeps its id
    moved = [fid for fid, text in got.items() if text == "hand-added, reusing 3"]
    assert len(moved) == 1 and moved[0] not in (1, 2, 3) and moved[0] <= MAX_ID
    assert [(c[0], c[1], c[2]) for c in s.id_conflicts] == [(3, 3, 4)]
    assert _insert(s, "next") == 4
    before = _facts(s)
    s.rebuild()
    assert _facts(s) == before
    s.close()
    s = SqliteFactsStore(log, tmp_path / "fresh.sqlite")
    assert _facts(s) == before
    s.close()


def test_a_copied_line_is_not_a_second_fact(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    with open(log, "a") as f:
        f.write(log.read_text())
    s.catch_up()
    assert _facts(s) == {1: "one"} and not s.id_conflicts
    s.close()


@pytest.mark.parametrize("bad_id", [(1 << 63) - 1, 1 << 53, 0, -4])
def test_an_id_out_of_json_range_is_a_bad_line_and_later_facts_stay_readable(tmp_path, bad_id):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    rec = {**json.loads(log.read_text()), "id": bad_id, "fact": "out of range"}
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")
    s.catch_up()
    assert [n for n, _ in s.bad_lines] == [2] and "2^53" in s.bad_lines[0][1] and "fix:" in s.bad_lines[0][1]
    fid = _insert(s, "after")
    assert fid == 2
    assert _facts(s) == {1: "one", 2: "after"}
    s.close()


def test_an_id_at_the_limit_never_pushes_the_next_one_past_it(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    rec = {**json.loads(log.read_text()), "id": MAX_ID, "fact": "at the limit"}
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")
    fid = _insert(s, "after")
    assert 1 < fid <= MAX_ID and _facts(s) == {1: "one", MAX_ID: "at the limit", fid: "after"}
    s.close()


def test_remember_through_the_daemon_survives_a_rename_over_the_log(daemon, places):
    from brain.daemon.client.calls import send

    vault = daemon["vault"]
    acked = []
    for i in range(3):
        body, is_error = send(places, vault, "remember", {"fact": f"fact number {i}", "provenance": "t"})
        assert not is_error, body
        acked.append(int(body["id"]))
        log = next(p for p in (vault / ".brain").rglob("*.jsonl"))
        _replace_by_rename(log)
    on_disk = {i for p in (vault / ".brain").rglob("*.jsonl") for i in _ids_in(p)}
    assert set(acked) <= on_disk and len(set(acked)) == 3
    body, is_error = send(places, vault, "recall", {"query": "fact number", "limit": 10})
    assert not is_error and {int(f["fact_id"]) for f in body["facts"]} >= set(acked)


def test_doctor_names_both_lines_of_a_reused_id_and_says_stop_the_daemon_before_editing(tmp_path, places):
    import subprocess

    from daemon_fixtures import BRAIN, child_env

    from brain.daemon import config as config_mod

    vault = tmp_path / "v"
    (vault / ".brain").mkdir(parents=True)
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False,
                                         "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
    rec = {"op": "insert", "id": 1, "ts": "2026-01-01T00:00:00.000Z", "fact": "first", "kind": "fact"}
    (vault / ".brain" / "facts.jsonl").write_text(
        json.dumps(rec) + "\n" + "{not json\n" + json.dumps({**rec, "fact": "second, same id"}) + "\n")
    env = child_env()
    env["BRAIN_VAULT"] = str(vault)
    r = subprocess.run([BRAIN, "doctor", "facts", "--json"], capture_output=True, text=True, env=env, timeout=60)
    rows = {x["check"]: x["detail"] for x in json.loads(r.stdout) if x["status"] != "ok"}
    assert "line 3 reuses id 1 of line 1" in rows["reused ids"] and "read as fact #" in rows["reused ids"]
    s = SqliteFactsStore(vault / ".brain" / "facts.jsonl", tmp_path / "c.sqlite")
    moved = s.id_conflicts[0][3]
    s.close()
    assert f"fact #{moved}" in rows["reused ids"]  # doctor and the projection agree on the id
    assert "brain daemon stop" in rows["bad lines"]


@pytest.mark.parametrize("copy_has_the_line", [True, False])
def test_a_rename_over_the_log_during_the_write_is_caught_before_the_acknowledgement(tmp_path, copy_has_the_line):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    before = log.read_bytes()
    real_append = s.log.append

    def append_then_sync_tool_renames(records, **kw):  # the real append, then a sync tool acting at once
        out = real_append(records, **kw)
        if copy_has_the_line:
            _replace_by_rename(log)  # a copy taken after our write
        else:
            tmp = log.with_name(".older")  # a copy taken before it
            tmp.write_bytes(before)
            os.replace(tmp, log)
        s.log.append = real_append
        return out

    s.log.append = append_then_sync_tool_renames
    fid = _insert(s, "written while the file was replaced")
    texts = [json.loads(line)["fact"] for line in log.read_text().splitlines()]
    assert texts == ["one", "written while the file was replaced"]  # there once, in the file at the path
    assert _ids_in(log) == [1, fid]
    s.close()


def test_a_whole_record_without_its_final_newline_is_a_fact(tmp_path):
    """A script that appends a complete JSON fact and no newline: the fact is read (docs/architecture.md,
    "When another program writes the log"), brain's next record goes on a line of its own, and a line
    cut short still waits; the same answers from a rebuild."""
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    first = _insert(s, "written by brain")
    theirs = {"op": "insert", "id": 900, "ts": "2026-12-07T10:00:00.000Z", "fact": "appended by a script",
              "kind": "fact", "entity_slug": None, "visibility": "world", "source": "script"}
    with open(log, "ab") as f:
        f.write(json.dumps(theirs).encode())   # no newline
    s.catch_up()
    assert _facts(s) == {first: "written by brain", 900: "appended by a script"}
    after = _insert(s, "written by brain again")
    lines = log.read_bytes().split(b"\n")
    assert lines[-1] == b"" and [json.loads(x)["id"] for x in lines[:-1]] == [first, 900, after]
    assert not list(tmp_path.glob("facts.jsonl.torn-*"))   # nothing set aside: it was whole
    with open(log, "ab") as f:
        f.write(b'{"op":"insert","id":950,"fact":"half wri')   # still being written
    s.catch_up()
    assert 950 not in _facts(s) and after in _facts(s)
    s.close()
    fresh = SqliteFactsStore(log, tmp_path / "rebuilt.sqlite")
    assert _facts(fresh) == {first: "written by brain", 900: "appended by a script", after: "written by brain again"}
    fresh.close()
