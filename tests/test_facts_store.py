"""The facts log is the record: durability, replay, rebuild, bad lines, the writer lock."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from brain.daemon.server.vault_engine import VaultEngine
from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import FactScope, Order
from brain.indexer.vault.visibility import Viewer
from brain.daemon.vault_lock import VaultLock, VaultLocked


def _insert(store, text, **kw):
    return store.insert(fact=text, kind=kw.get("kind", "fact"), entity_slug=kw.get("entity"),
                        visibility="world", source="t", valid_until=None)


def test_deleting_the_cache_keeps_facts_and_ids(tmp_path):
    log, cache = tmp_path / "v" / "facts.jsonl", tmp_path / "c" / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    ids = [_insert(s, f"fact {i}") for i in range(20)]
    s.expire(ids[3], "gone")
    before = [r for r in s.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)]
    s.close()
    for p in cache.parent.iterdir():
        p.unlink()
    s2 = SqliteFactsStore(log, cache)
    after = [r for r in s2.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)]
    assert after == before and [r.id for r in after] == ids
    assert _insert(s2, "next") == 21
    s2.close()


class _CountingStore(SqliteFactsStore):
    """The real store, remembering how many log lines each catch-up read
    (the one run on open included)."""

    def catch_up(self) -> int:
        n = super().catch_up()
        self.reads = [*getattr(self, "reads", []), n]
        return n


def test_reopen_reads_only_new_lines(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    for i in range(5):
        _insert(s, f"fact {i}")
    s.close()
    # a line another writer appended while this cache was closed
    rec = json.loads(log.read_text().splitlines()[-1])
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({**rec, "id": 6, "fact": "appended"}) + "\n")
    s = _CountingStore(log, cache)
    assert s.reads == [1]  # the new line only, not the five the cache already holds
    assert [r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)] == [f"fact {i}" for i in range(5)] + ["appended"]
    assert s.catch_up() == 0 and s.reads == [1, 0]
    s.close()


def test_corrupt_line_skipped_and_reported_rest_loaded(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    _insert(s, "two")
    s.close()
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n{this is not json\n" + '{"op":"bogus"}\n' + lines[1] + "\n")
    cache.unlink()
    s = SqliteFactsStore(log, cache)
    assert [r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)] == ["one", "two"]
    assert [n for n, _ in s.bad_lines] == [2, 3]
    s.close()


def test_torn_last_line_is_set_aside_not_lost(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "whole")
    s.close()
    with open(log, "ab") as f:
        f.write(b'{"op":"insert","id":2,"ts":"2026-')
    s = SqliteFactsStore(log, cache)
    assert [r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)] == ["whole"]
    fid = _insert(s, "after the crash")
    assert fid == 3  # the torn line claimed #2: an id is never minted twice, even one never acknowledged
    s.close()
    assert all(json.loads(l) for l in log.read_text().splitlines())
    aside = list(tmp_path.glob("facts.jsonl.torn-*"))
    assert aside and aside[0].read_bytes().startswith(b'{"op":"insert","id":2')


def test_hand_edited_log_replaced_under_cache_triggers_rebuild(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "original")
    s.close()
    rec = {"op": "insert", "id": 7, "ts": "2026-01-01T00:00:00.000Z", "fact": "replaced", "kind": "fact",
           "entity_slug": None, "visibility": "world", "source": "hand"}
    log.write_text(json.dumps(rec) + "\n")
    s = SqliteFactsStore(log, cache)
    assert [(r["id"], r["fact"]) for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)] == [(7, "replaced")]
    s.close()


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from brain.daemon.facts.store import SqliteFactsStore
    s = SqliteFactsStore(Path(sys.argv[1]), Path(sys.argv[2]))
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
    s = SqliteFactsStore(log, cache)
    have = {r["id"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)}
    assert set(acked) <= have and len(acked) >= 150
    s.close()


def test_second_long_lived_writer_gets_a_clear_error(vault, places):
    first = VaultEngine(vault, places, {}, writer="daemon")
    try:
        with pytest.raises(VaultLocked) as e:
            VaultEngine(vault, places, {}, writer="daemon", lock_wait_s=0.1)
        assert f"pid {os.getpid()}" in str(e.value) and "daemon" in str(e.value)
    finally:
        first.close()
    again = VaultEngine(vault, places, {}, writer="daemon", lock_wait_s=0.1)
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


def test_a_record_that_cannot_be_applied_is_a_bad_line_not_a_wedge(tmp_path):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "one")
    s.close()
    good = log.read_text()
    rec = json.loads(good)
    bad_types = dict(rec, id=2, source_session={"x": 1})
    no_text = {"op": "insert", "id": 3, "ts": rec["ts"]}
    null_text = dict(rec, id=4, fact=None)
    log.write_text(good + "".join(json.dumps(r) + "\n" for r in (bad_types, no_text, null_text)))
    s = SqliteFactsStore(log, cache)  # opening must not fail
    assert [n for n, _ in s.bad_lines] == [2, 3, 4]
    fid = _insert(s, "two")
    assert [r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)] == ["one", "two"]
    assert fid == 5  # never reuses an id a logged line already claimed
    s.close()


def test_creating_the_log_makes_its_directory_entry_durable(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def watching_fsync(fd):  # the real fsync, noting what it was called on
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", watching_fsync)
    log = tmp_path / "state" / "facts.jsonl"
    s = SqliteFactsStore(log, tmp_path / "facts.sqlite")
    _insert(s, "one")
    s.close()
    assert str(log.parent) in synced and str(log) in synced


def test_a_torn_tail_is_durable_aside_before_the_log_is_cut(tmp_path, monkeypatch):
    log, cache = tmp_path / "facts.jsonl", tmp_path / "facts.sqlite"
    s = SqliteFactsStore(log, cache)
    _insert(s, "whole")
    s.close()
    with open(log, "ab") as f:
        f.write(b'{"op":"insert","id":2,"ts":"2026-')
    events = []
    real_fsync = os.fsync

    def watching_fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", watching_fsync)
    s = SqliteFactsStore(log, cache)
    _insert(s, "after the crash")
    s.close()
    aside = next(tmp_path.glob("facts.jsonl.torn-*"))
    synced = [p for _, p in events]
    # the set-aside copy reaches the disk no later than the cut log does
    assert str(aside) in synced and synced.index(str(aside)) < synced.index(str(log))


_SHORT_WRITE = textwrap.dedent("""
    import json, os, resource, signal, sys
    from brain.daemon.facts.log import FactsLog

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    path = sys.argv[1]
    log = FactsLog(path)
    rec = lambda i, text: {"op": "insert", "id": i, "ts": "2026-01-01T00:00:00.000Z", "fact": text}
    log.append([rec(1, "first")])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 20, hard))
    try:
        log.append([rec(2, "x" * 200)])  # the disk fills part way through the line
        print("no error")
    except OSError as e:
        print("failed", e.errno)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    log.append([rec(3, "after the disk had room again")])
    log.close()
    print(json.dumps([[rec and rec["id"], err] for _, rec, _, err in FactsLog(path).replay()]))
""")


def test_a_failed_append_leaves_no_partial_line_to_swallow_the_next_one(tmp_path):
    out = subprocess.run([sys.executable, "-c", _SHORT_WRITE, str(tmp_path / "facts.jsonl")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    first, replayed = out.stdout.splitlines()
    assert first.startswith("failed")
    # the acknowledged fact #3 is a whole line of its own, not glued to the torn #2
    assert json.loads(replayed) == [[1, None], [3, None]]
