"""A facts log changed behind the projection's read position is re-read; `brain doctor facts` reports the log."""

from __future__ import annotations

import json
import time

from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import FactScope, Order
from brain.indexer.vault.visibility import Viewer


def _insert(store, text):
    return store.insert(fact=text, kind="fact", entity_slug=None, visibility="world", source="t", valid_until=None)


def _facts(store):
    return [(r["id"], r["fact"]) for r in store.listed(FactScope(order=Order.ID), Viewer.owner(), None)]


def test_a_same_length_edit_behind_the_offset_is_seen_on_reopen(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    for text in ("alpha", "bravo", "charlie"):
        _insert(s, text)
    s.close()
    log.write_text(log.read_text().replace('"fact":"bravo"', '"fact":"BRAVO"'))
    s = SqliteFactsStore(log, cache)
    assert _facts(s) == [(1, "alpha"), (2, "BRAVO"), (3, "charlie")]
    s.close()


def test_a_line_inserted_in_the_middle_is_seen_by_a_running_store(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "first")
    _insert(s, "last")
    lines = log.read_text().splitlines(keepends=True)
    extra = json.dumps({**json.loads(lines[0]), "id": 9, "fact": "inserted by hand"}) + "\n"
    time.sleep(0.05)  # a person's edit comes later than the write before it
    log.write_text(lines[0] + extra + lines[1])
    s.catch_up()
    assert _facts(s) == [(1, "first"), (2, "last"), (9, "inserted by hand")]
    # and an in-place same-length edit while it runs
    time.sleep(0.05)
    with open(log, "r+b") as f:
        data = f.read()
        f.seek(0)
        f.write(data.replace(b'"fact":"first"', b'"fact":"FIRST"'))
    s.catch_up()
    assert (1, "FIRST") in _facts(s)
    assert _insert(s, "after") == 10
    s.close()


def test_doctor_reports_bad_lines_torn_tail_and_edits(tmp_path, places, monkeypatch):
    import subprocess

    from daemon_fixtures import BRAIN, child_env

    from brain.daemon import config as config_mod
    from brain.daemon.server.vault_engine import VaultEngine

    vault = tmp_path / "v"
    vault.mkdir()
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False,
                                         "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
    e = VaultEngine(vault, places, {}, writer="test")
    for text in ("one", "two", "three"):
        _insert(e.facts, text)
    e.close()
    log, = (vault / ".brain" / "facts").glob("*.jsonl")  # this device's log
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(lines[0] + "\n" + "{not json\n" + lines[1].replace('"two"', '"TWO"') + lines[2]
                   + '{"op":"insert","id":4,"ts":"2026-')
    env = child_env()
    env["BRAIN_VAULT"] = str(vault)
    r = subprocess.run([BRAIN, "doctor", "facts", "--json"], capture_output=True, text=True, env=env, timeout=60)
    rows = json.loads(r.stdout)
    text = "\n".join(f"{x['status']} {x['check']}: {x['detail']}" for x in rows)
    assert r.returncode == 1, text
    assert "line 3" in text and "line 2" not in text  # real line numbers: the blank line 2 is fine
    assert "torn" in text and "fix:" in text
    assert "changed behind" in text
    bad = [x for x in rows if x["check"] == "bad lines"]
    assert bad and bad[0]["status"] == "fail"
