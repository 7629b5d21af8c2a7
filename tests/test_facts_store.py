"""The facts log is the record: durability, replay, rebuild, bad lines, the writer lock."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from brain.daemon.engine import Engine
from brain.daemon.facts_store import FactsStore
from brain.daemon.vault_lock import VaultLock, VaultLocked


def _insert(store, text, **kw):
    return store.insert(fact=text, kind=kw.get("kind", "fact"), entity_slug=kw.get("entity"),
                        visibility="world", source="t", valid_until=None)


def test_deleting_the_cache_keeps_facts_and_ids(tmp_path):
    log, cache = tmp_path / "v" / "facts.jsonl", tmp_path / "c" / "facts.sqlite"
    s = FactsStore(log, cache)
    ids = [_insert(s, f"fact {i}") for i in range(20)]
    s.expire(ids[3], "gone")
    before = [tuple(r) for r in s.query([], [], "id", None, active_only=False)]
    s.close()
    for p in cache.parent.iterdir():
        p.unlink()
    s2 = FactsStore(log, cache)
    after = [tuple(r) for r in s2.query([], [], "id", None, active_only=False)]
    assert after == before and [r[0] for r in after] == ids
    assert _insert(s2, "next") == 21
    s2.close()


def test_reopen_reads_only_new_lines(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = FactsStore(log, cache)
    _insert(s, "a")
    s.close()
    s = FactsStore(log, cache)
    assert s.catch_up() == 0  # nothing new
    s.close()


def test_corrupt_line_skipped_and_reported_rest_loaded(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = FactsStore(log, cache)
    _insert(s, "one")
    _insert(s, "two")
    s.close()
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n{this is not json\n" + '{"op":"bogus"}\n' + lines[1] + "\n")
    cache.unlink()
    s = FactsStore(log, cache)
    assert [r["fact"] for r in s.query([], [], "id", None)] == ["one", "two"]
    assert [n for n, _ in s.bad_lines] == [2, 3]
    s.close()


def test_torn_last_line_is_set_aside_not_lost(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = FactsStore(log, cache)
    _insert(s, "whole")
    s.close()
    with open(log, "ab") as f:
        f.write(b'{"op":"insert","id":2,"ts":"2026-')
    s = FactsStore(log, cache)
    assert [r["fact"] for r in s.query([], [], "id", None)] == ["whole"]
    fid = _insert(s, "after the crash")
    assert fid == 2
    s.close()
    assert all(json.loads(l) for l in log.read_text().splitlines())
    aside = list(tmp_path.glob("facts.jsonl.torn-*"))
    assert aside and aside[0].read_bytes().startswith(b'{"op":"insert","id":2')


def test_hand_edited_log_replaced_under_cache_triggers_rebuild(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = FactsStore(log, cache)
    _insert(s, "original")
    s.close()
    rec = {"op": "insert", "id": 7, "ts": "2026-01-01T00:00:00.000Z", "fact": "replaced", "kind": "fact",
           "entity_slug": None, "visibility": "world", "source": "hand"}
    log.write_text(json.dumps(rec) + "\n")
    s = FactsStore(log, cache)
    assert [(r["id"], r["fact"]) for r in s.query([], [], "id", None)] == [(7, "replaced")]
    s.close()


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from brain.daemon.facts_store import FactsStore
    s = FactsStore(Path(sys.argv[1]), Path(sys.argv[2]))
    for i in range(1000):
        fid = s.insert(fact=f"fact {i}", kind="fact", entity_slug="people/x", visibility="world",
                       source="t", valid_until=None)
        print(fid, flush=True)
""")


def test_kill_9_mid_stream_loses_no_acknowledged_fact(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(cache)],
                            stdout=subprocess.PIPE, text=True)
    acked = []
    for line in proc.stdout:
        acked.append(int(line))
        if len(acked) == 150:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    acked += [int(l) for l in proc.stdout.read().split()]  # lines already in the pipe
    s = FactsStore(log, cache)
    have = {r["id"] for r in s.query([], [], "id", None)}
    assert set(acked) <= have and len(acked) >= 150
    s.close()


def test_second_long_lived_writer_gets_a_clear_error(vault, places):
    first = Engine(vault, places, {}, writer="daemon")
    try:
        with pytest.raises(VaultLocked) as e:
            Engine(vault, places, {}, writer="daemon", lock_wait_s=0.1)
        assert f"pid {os.getpid()}" in str(e.value) and "daemon" in str(e.value)
    finally:
        first.close()
    again = Engine(vault, places, {}, writer="daemon", lock_wait_s=0.1)
    again.close()


def test_lock_of_a_dead_process_is_free(vault):
    code = f"from brain.daemon.vault_lock import VaultLock; VaultLock({str(vault)!r}).acquire('cli'); import os; os._exit(0)"
    subprocess.run([sys.executable, "-c", code], check=True)
    lock = VaultLock(vault)
    assert lock.holder()["kind"] == "cli"  # the file remembers, the kernel released
    lock.acquire("daemon", wait_s=0)
    assert lock.held
    lock.release()


def test_short_writer_waits_briefly_for_the_lock(vault):
    holder = VaultLock(vault)
    holder.acquire("cli")
    import threading

    threading.Timer(0.2, holder.release).start()
    waiter = VaultLock(vault)
    t0 = time.monotonic()
    waiter.acquire("cli", wait_s=3)
    assert waiter.held and time.monotonic() - t0 >= 0.15
    waiter.release()
