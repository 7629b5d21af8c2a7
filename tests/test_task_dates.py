"""An undated open task keeps the date it was first seen (daemon/server/task_dates.py): editing
its page elsewhere does not move it to the page's new last change, and a `brain rebuild`
(the caches thrown away) keeps it, since it lives in the vault's state folder."""

from __future__ import annotations

import datetime as dt
import os
import shutil

from conftest import call
from indexer_fixtures import write

from brain.daemon.protocol.caller import Caller
from brain.daemon.server.vault_engine import VaultEngine
from brain.daemon.server.task_dates import SQLiteTaskDates

FIRST = dt.datetime(2026, 11, 2, 9, tzinfo=dt.timezone.utc).timestamp()
LATER = dt.datetime(2026, 12, 6, 17, tzinfo=dt.timezone.utc).timestamp()


def threads(vault, places, name: str) -> dict[str, str]:
    """text → date of the entity's open threads, from a fresh engine over the caches."""
    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.attach_index()
        body, err = call(e, "entity", {"name": name}, Caller.local("cli"))
        assert not err, body
        return {t["text"]: t["date"] for t in body["card"]["open_threads"]}
    finally:
        e.close()


def touched(path, text: str, when: float):
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when, when))


def test_an_edit_elsewhere_on_the_page_does_not_move_an_undated_tasks_date(vault, places):
    page = write(vault, "people/priya-raman.md", "# Priya Raman\n\n- [ ] call the bank\n")
    os.utime(page, (FIRST, FIRST))
    daily = write(vault, "daily/2026-11-02.md", "- [ ] send [[Priya Raman]] the contract\n")
    os.utime(daily, (FIRST, FIRST))
    before = threads(vault, places, "Priya Raman")
    assert before == {"call the bank": "2026-11-02T09:00:00.000Z",
                      "send [[Priya Raman]] the contract": "2026-11-02T09:00:00.000Z"}

    touched(page, "# Priya Raman\n\nCounsel at the ledger firm.\n\n- [ ] call the bank\n- [ ] book the room\n", LATER)
    touched(daily, "Rain all day.\n\n- [ ] send [[Priya Raman]] the contract\n", LATER)
    after = threads(vault, places, "Priya Raman")
    assert after["call the bank"] == before["call the bank"]
    assert after["send [[Priya Raman]] the contract"] == before["send [[Priya Raman]] the contract"]
    assert after["book the room"] == "2026-12-06T17:00:00.000Z"   # new with the edit: dated by it

    # `brain rebuild` throws the caches away; the state folder, and the dates, stay
    shutil.rmtree(places.cache_dir(vault))
    assert threads(vault, places, "Priya Raman") == after


def test_the_key_is_the_page_and_the_tasks_words(tmp_path):
    path = tmp_path / "state" / "task_dates.sqlite"
    first_seen = SQLiteTaskDates(path).first_seen
    assert first_seen("a", ["call  the bank"], "2026-01-01") == {"call  the bank": "2026-01-01"}
    assert first_seen("a", ["call the bank", "new"], "2026-02-01") == {"call the bank": "2026-01-01",
                                                                           "new": "2026-02-01"}
    assert first_seen("b", ["call the bank"], "2026-03-01") == {"call the bank": "2026-03-01"}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    # a file that cannot be used dates the task by its page, and the read goes on
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database at all" * 100)
    assert SQLiteTaskDates(broken).first_seen("a", ["x"], "2026-04-01") == {"x": "2026-04-01"}


def test_a_read_of_known_tasks_writes_nothing(tmp_path):
    """context_pack reads every card's tasks: once a task is known, asking again runs one SELECT
    and no write; a new task is one INSERT."""
    store = SQLiteTaskDates(tmp_path / "task_dates.sqlite")
    store.first_seen("a", ["call the bank", "pay rent"], "2026-01-01")
    ran: list[str] = []
    store._conn().set_trace_callback(ran.append)
    assert store.first_seen("a", ["pay rent", "call the bank"], "2026-05-01") == {"pay rent": "2026-01-01",
                                                                                "call the bank": "2026-01-01"}
    assert [s.split()[0] for s in ran] == ["SELECT"]
    ran.clear()
    store.first_seen("a", ["call the bank", "a new one"], "2026-05-01")
    assert sum(s.startswith("INSERT") for s in ran) == 1
