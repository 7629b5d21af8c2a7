"""A fact's id names one fact forever: an older log put back, copies renamed over it under writers, a cloned
state folder. docs/architecture.md, "When an older log is put back" and "A device id belongs to one machine".
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)

from brain.daemon.facts.device import device_id
from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import FactScope, Order
from brain.indexer.vault.visibility import Viewer


def _store(tmp_path, state="state", cache="facts.sqlite"):
    return SqliteFactsStore.for_vault(tmp_path / "vault" / ".brain", tmp_path / "cache" / cache, tmp_path / state / "device")


def _insert(store, text):
    return store.insert(fact=text, kind="fact", entity_slug=None, visibility="world", source="t", valid_until=None)


def _facts(store):
    return {r["id"]: r["fact"] for r in store.listed(FactScope(order=Order.ID), Viewer.owner(), None)}


def _texts_by_id(brain_dir):
    """id → every different text an insert line in any log at its path gives it."""
    found: dict[int, set] = {}
    for path in brain_dir.rglob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("op") == "insert":
                found.setdefault(rec["id"], set()).add(rec["fact"])
    return found


def _put_back(path, older: bytes, in_place: bool = False):
    """`git checkout -- <log>` (the older bytes written over the file) or a restore by copy-then-rename."""
    if in_place:
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(older)
        return
    tmp = path.with_name(f".{path.name}.restore-tmp")
    tmp.write_bytes(older)
    os.replace(tmp, path)


def test_an_older_log_put_back_mints_no_id_again_and_its_missing_facts_come_back(tmp_path):
    s = _store(tmp_path)
    first = _insert(s, "The office is on the third floor")
    older = s.log.path.read_bytes()
    door = _insert(s, "Alice's door code is 4417")
    forgotten = _insert(s, "The meeting is on Monday")
    assert s.expire(forgotten, "moved")
    _put_back(s.log.path, older)

    milk = _insert(s, "Buy milk on Friday")
    assert milk not in (first, door, forgotten)
    # the dropped facts are back under their own ids, the forget too
    assert _facts(s)[door] == "Alice's door code is 4417"
    assert s.get(forgotten, Viewer.owner())["expired_at"] is not None
    texts = _texts_by_id(s.brain_dir)
    assert texts[door] == {"Alice's door code is 4417"} and texts[milk] == {"Buy milk on Friday"}
    assert s.restored_count() == 3  # the insert of the door code, the meeting and its expiry
    s.close()
    # a rebuild from the logs alone gives the same ids
    again = _store(tmp_path, cache="other.sqlite")
    assert _facts(again)[door] == "Alice's door code is 4417" and _facts(again)[milk] == "Buy milk on Friday"
    again.close()


def test_an_older_log_put_back_while_the_daemon_is_stopped_is_made_whole_at_the_next_start(tmp_path):
    s = _store(tmp_path)
    older = s.log.path.read_bytes()
    door = _insert(s, "Alice's door code is 4417")
    s.close()
    _put_back(s.log.path, older, in_place=True)
    s = _store(tmp_path)
    assert _facts(s) == {door: "Alice's door code is 4417"}
    assert _texts_by_id(s.brain_dir) == {door: {"Alice's door code is 4417"}}
    s.close()


def test_copies_renamed_over_the_log_under_four_writers_lose_no_acknowledged_fact(tmp_path):
    s = _store(tmp_path)
    _insert(s, "before the writers")
    acked: list[tuple[int, str]] = []
    stop = threading.Event()

    refused = []

    def writer(w: int) -> None:
        for i in range(40):
            text = f"writer {w} fact {i}"
            try:
                acked.append((_insert(s, text), text))
            except OSError:  # the log kept changing during every attempt: refused, nothing acknowledged
                refused.append(text)

    def restorer() -> None:
        snapshots = []
        while not stop.is_set():
            try:
                snapshots.append(s.log.path.read_bytes())
                older = snapshots[max(0, len(snapshots) - 5)]
                _put_back(s.log.path, older, in_place=len(snapshots) % 3 == 0)
            except FileNotFoundError:
                pass
            time.sleep(0.01)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    attacker = threading.Thread(target=restorer)
    attacker.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    attacker.join()
    s.catch_up()
    s.restore_acknowledged()

    texts = _texts_by_id(s.brain_dir)
    assert len(acked) + len(refused) == 160 and len(acked) >= 80
    assert len({fid for fid, _ in acked}) == len(acked)
    assert [(fid, text) for fid, text in acked if texts.get(fid) != {text}] == []
    assert [fid for fid, got in texts.items() if len(got) > 1] == []
    assert all(_facts(s)[fid] == text for fid, text in acked)
    s.close()


def test_a_state_folder_cloned_to_another_place_takes_a_new_device_id_before_it_mints(tmp_path):
    a = _store(tmp_path)
    mine = [_insert(a, f"fact {i} on the first machine") for i in range(3)]
    device_a = a.device
    a.close()
    # the second machine: a copy of the state folder (a migration or a cloned home), the same synced vault
    shutil.copytree(tmp_path / "state", tmp_path / "state-clone")
    b = _store(tmp_path, state="state-clone", cache="b.sqlite")
    assert b.device != device_a and b.slot != a.slot
    theirs = [_insert(b, f"fact {i} on the second machine") for i in range(3)]
    a = _store(tmp_path)
    assert a.device == device_a  # the original keeps its id
    mine += [_insert(a, f"fact {i} later on the first machine") for i in range(3, 6)]
    assert not set(mine) & set(theirs)
    texts = _texts_by_id(a.brain_dir)
    assert [fid for fid, got in texts.items() if len(got) > 1] == []
    assert all(texts[fid] == {f"fact {i} on the second machine"} for i, fid in enumerate(theirs))
    a.close()
    b.close()


def test_a_device_id_bound_to_another_machine_is_replaced_and_an_unbound_one_is_kept(tmp_path):
    device_file = tmp_path / "state" / "device"
    first, moved = device_id(device_file, machine="machine-one")
    assert not moved and device_id(device_file, machine="machine-one") == (first, False)
    other, moved = device_id(device_file, machine="machine-two")
    assert moved and other != first
    # an id an older brain made (no binding yet) is kept and bound
    device_file.with_name("device.binding").unlink()
    assert device_id(device_file, machine="machine-three") == (other, False)
    assert json.loads(device_file.with_name("device.binding").read_text())["machine"] == "machine-three"


def test_remember_through_the_daemon_after_git_checkout_of_the_log_gets_a_new_id(daemon, places):
    from brain.daemon.client.calls import send

    vault = daemon["vault"]

    def remember(text):
        body, is_error = send(places, vault, "remember", {"fact": text, "provenance": "t"})
        assert not is_error, body
        return int(body["id"])

    remember("The office is on the third floor")
    log = next((vault / ".brain" / "facts").glob("*.jsonl"))
    older = log.read_bytes()
    door = remember("Alice's door code is 4417")
    _put_back(log, older, in_place=True)
    milk = remember("Buy milk on Friday")
    assert milk != door
    assert _texts_by_id(vault / ".brain")[door] == {"Alice's door code is 4417"}
    body, is_error = send(places, vault, "recall", {"query": "door code", "limit": 5})
    assert not is_error and {int(f["fact_id"]): f["fact"] for f in body["facts"]}.get(door) == \
        "Alice's door code is 4417"


def test_doctor_reports_acknowledged_facts_missing_from_the_log_and_those_written_again(tmp_path, places):
    from brain.cli.doctor import DoctorContext, _facts_log

    vault = tmp_path / "v"
    (vault / ".brain").mkdir(parents=True)

    def open_store():
        return SqliteFactsStore.for_vault(vault / ".brain", places.cache_dir(vault) / "facts.sqlite",
                                    places.vault_state_dir(vault) / "device")

    def rows():
        return {(status, name): detail for status, name, detail in _facts_log(DoctorContext(places, {}, vault))}

    s = open_store()
    _insert(s, "The office is on the third floor")
    older = s.log.path.read_bytes()
    door = _insert(s, "Alice's door code is 4417")
    s.close()
    assert ("ok", "acknowledged facts") in rows()
    _put_back(s.log.path, older)
    assert "1 line(s) this device acknowledged are in no facts log" in rows()[("warn", "acknowledged facts")]
    s = open_store()
    s.close()
    got = rows()
    assert ("warn", "acknowledged facts") not in got and f"#{door}" in got[("info", "restored facts")]
