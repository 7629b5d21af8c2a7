"""Two devices, one vault: two copies of a vault, each served by its own daemon (its own BRAIN_HOME),
kept in step by a simulated file-sync tool that copies and renames files both ways and makes
conflict copies. docs/architecture.md, "Two devices, one vault"."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from daemon_fixtures import alive, child_env, write_vault

from brain.daemon import config as config_mod
from brain.daemon.client.calls import send
from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import FactScope, Order
from brain.indexer.vault.visibility import Viewer
from brain.daemon.places import Places
from brain.daemon.rendezvous import read_pid_file

CONFLICT_NAMES = (  # how Syncthing, Dropbox and iCloud name the version that lost
    lambda stem, n: f"{stem}.sync-conflict-20261203-12000{n}-ABCDEFG.jsonl",
    lambda stem, n: f"{stem} (Device B's conflicted copy 2026-12-0{n}).jsonl",
    lambda stem, n: f"{stem} {n + 1}.jsonl",
)


class Device:
    """One machine: its own BRAIN_HOME (so its own device id) and a daemon on its copy of the vault."""

    def __init__(self, vault: Path):
        self.vault = vault
        self.home = Path(tempfile.mkdtemp(prefix="bh-", dir="/tmp"))  # short: AF_UNIX paths
        self.places = Places.from_env({"BRAIN_HOME": str(self.home)})
        config_mod.save(self.places.config_file, {"vault": str(vault), "embeddings.enabled": False,
                                                  "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
        self.env = {**child_env(), "BRAIN_HOME": str(self.home), "BRAIN_VAULT": str(vault)}
        self.proc = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "brain.daemon.server", "--vault", str(self.vault)],
                                     env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not (read_pid_file(self.places, self.vault) or {}).get("pid"):
            assert time.monotonic() < deadline and self.proc.poll() is None, "the daemon did not start"
            time.sleep(0.05)

    def call(self, verb: str, args: dict) -> dict:
        body, is_error = send(self.places, self.vault, verb, args)
        assert not is_error, body
        return body

    def remember(self, text: str) -> int:
        return int(self.call("remember", {"fact": text, "provenance": "sync-test"})["id"])

    def seen(self) -> dict[int, tuple[str, bool]]:
        body = self.call("recall", {"include_expired": True, "limit": 200})
        return {int(f["fact_id"]): (f["fact"], f.get("expired_at") is not None) for f in body["facts"]}

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


def _put(path: Path, data: bytes) -> None:
    """A sync tool's write: a temp file beside the target, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".syncing.{path.name}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, path)


def sync(a: Path, b: Path, round_no: int) -> list[str]:
    """Bring the two `.brain` folders together; returns the conflict copies made.

    A file on one side only is copied; a file that grew on one side replaces
    the other; two versions that diverged are both kept: the longer stays,
    the other becomes a conflict copy on both sides. The writer lock is per
    machine and stays out of it (as with a .stignore).
    """
    made = []
    names = {p.relative_to(root / ".brain") for root in (a, b) for p in (root / ".brain").rglob("*")
             if p.is_file() and not p.name.startswith(".") and p.name != "writer.lock"}
    for rel in sorted(names):
        pa, pb = a / ".brain" / rel, b / ".brain" / rel
        da = pa.read_bytes() if pa.exists() else None
        db = pb.read_bytes() if pb.exists() else None
        if da == db:
            continue
        if da is None or (db is not None and db.startswith(da)):
            _put(pa, db)
        elif db is None or da.startswith(db):
            _put(pb, da)
        else:
            keep, lose = (da, db) if len(da) >= len(db) else (db, da)
            copy = rel.parent / CONFLICT_NAMES[round_no % 3](rel.name.removesuffix(".jsonl"), round_no)
            for root in (a, b):
                _put(root / ".brain" / copy, lose)
                _put(root / ".brain" / rel, keep)
            made.append(str(copy))
    return made


def _hand_line(vault: Path, fid: int, text: str) -> None:
    """A line added by hand (or by a device still on an older brain) to the shared facts.jsonl."""
    rec = {"op": "insert", "id": fid, "ts": "2026-01-02T00:00:00.000Z", "fact": text, "kind": "fact",
           "visibility": "world", "source": "hand"}
    with open(vault / ".brain" / "facts.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")


@pytest.fixture
def two_devices(tmp_path):
    a = write_vault(tmp_path / "a")
    (a / ".brain").mkdir()
    for i in (1, 2, 3):  # a vault from before device logs: its facts in the shared facts.jsonl
        _hand_line(a, i, f"legacy fact {i}")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    devices = [Device(a), Device(b)]
    for d in devices:
        d.start()
    yield devices
    for d in devices:
        d.stop()


def test_two_devices_converge_to_the_union_with_no_shared_ids(two_devices):
    dev_a, dev_b = two_devices
    acked: dict[int, str] = {}

    def remember(dev, text):
        fid = dev.remember(text)
        assert fid not in acked, f"id {fid} acknowledged twice"
        acked[fid] = text

    conflicts = []
    for round_no in range(3):
        for i in range(3):
            remember(dev_a, f"round {round_no} fact {i} from device A")
            remember(dev_b, f"round {round_no} fact {i} from device B")
        # both sides change the shared log meanwhile: the sync tool keeps both versions
        _hand_line(dev_a.vault, 10 + round_no, f"hand line {round_no} on A")
        _hand_line(dev_b.vault, 20 + round_no, f"hand line {round_no} on B")
        if round_no == 1:
            first_of_a = min(fid for fid, text in acked.items() if "from device A" in text)
            dev_b.call("forget", {"id": str(first_of_a), "reason": "forgotten on B"})
        conflicts += sync(dev_a.vault, dev_b.vault, round_no)
    assert len(conflicts) == 3 and any("sync-conflict" in c for c in conflicts)
    assert any("conflicted copy" in c for c in conflicts) and "facts 3.jsonl" in conflicts

    want = {fid: text for fid, text in acked.items()}
    want.update({i: f"legacy fact {i}" for i in (1, 2, 3)})
    want.update({10 + r: f"hand line {r} on A" for r in range(3)})
    want.update({20 + r: f"hand line {r} on B" for r in range(3)})
    time.sleep(1.2)  # reads take in other devices' lines at most once a second
    views = [dev.seen() for dev in (dev_a, dev_b)]
    assert views[0] == views[1]  # converged
    assert {fid: text for fid, (text, _gone) in views[0].items()} == want  # the union, every acked id as acked
    assert [fid for fid, (_t, gone) in views[0].items() if gone] == [first_of_a]  # B's expiry of A's fact
    # both devices wrote their own logs, in different slots
    logs = sorted(p.name for p in (dev_a.vault / ".brain" / "facts").glob("*.jsonl"))
    assert len(logs) == 2 and logs == sorted(p.name for p in (dev_b.vault / ".brain" / "facts").glob("*.jsonl"))
    for dev in (dev_a, dev_b):
        dev.stop()
    for dev in (dev_a, dev_b):  # a rebuild from the files alone gives the same ids
        store = SqliteFactsStore.for_vault(dev.vault / ".brain", dev.vault.parent / f"{dev.vault.name}.sqlite",
                                     dev.vault.parent / f"{dev.vault.name}.device")
        rows = store.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)
        assert {r["id"]: (r["fact"], r["expired_at"] is not None) for r in rows} == views[0]
        store.close()
    assert all(not alive(d.proc.pid) for d in (dev_a, dev_b))


def _store(brain_dir: Path, tmp: Path, device: str) -> SqliteFactsStore:
    return SqliteFactsStore.for_vault(brain_dir, tmp / f"{device}.sqlite", tmp / f"{device}.device")


def _insert(store, text):
    return store.insert(fact=text, kind="fact", entity_slug=None, visibility="world", source="t", valid_until=None)


def test_a_line_in_the_shared_log_never_takes_an_id_a_device_minted(tmp_path):
    brain_dir = tmp_path / "v" / ".brain"
    s = _store(brain_dir, tmp_path, "a")
    fid = _insert(s, "minted on this device")
    assert fid > 1 << 20 and fid % (1 << 20) == s.slot
    rec = {"op": "insert", "id": fid, "ts": "2026-01-01T00:00:00.000Z", "fact": "pasted into facts.jsonl"}
    (brain_dir / "facts.jsonl").write_text(json.dumps(rec) + "\n")  # read before the device logs
    s.catch_up()
    facts = {r["id"]: r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)}
    assert facts[fid] == "minted on this device" and "pasted into facts.jsonl" in facts.values()
    s.close()
    fresh = _store(brain_dir, tmp_path, "a-again")
    assert {r["id"]: r["fact"] for r in fresh.listed(FactScope(order=Order.ID), Viewer.owner(), None)} == facts  # a rebuild agrees
    fresh.close()


def test_an_expiry_from_another_device_applies_whichever_log_is_read_first(tmp_path):
    brain_dir = tmp_path / "v" / ".brain"
    a = _store(brain_dir, tmp_path, "a")
    fid = _insert(a, "minted on A")
    a.close()
    b = _store(brain_dir, tmp_path, "b")
    assert b.expire(fid, "forgotten on B")
    b_log = b.log.path
    b.close()
    a_log = next(p for p in (brain_dir / "facts").glob("*.jsonl") if p != b_log)
    # whichever name sorts first, the other order is tried by renaming both logs' device ids
    for first, second in ((a_log, b_log), (b_log, a_log)):
        other = tmp_path / f"other-{first.name}"
        other.mkdir()
        (other / "facts").mkdir()
        shutil.copy(first, other / "facts" / ("0" * 16 + ".jsonl"))
        shutil.copy(second, other / "facts" / ("f" * 16 + ".jsonl"))
        s = _store(other, tmp_path, f"reader-{first.name}")
        assert s.get(fid, Viewer.owner())["expired_at"] is not None and s.get(fid, Viewer.owner())["expire_reason"] == "forgotten on B"
        s.close()


def test_a_conflict_copy_of_a_device_log_adds_only_what_it_alone_holds(tmp_path):
    brain_dir = tmp_path / "v" / ".brain"
    s = _store(brain_dir, tmp_path, "a")
    ids = [_insert(s, f"fact {i}") for i in range(3)]
    log = s.log.path
    extra = json.dumps({"op": "insert", "id": 7, "ts": "2026-01-01T00:00:00.000Z", "fact": "only in the copy"})
    (log.parent / f"{log.stem}.sync-conflict-20261203-120000-ABCDEFG.jsonl").write_text(log.read_text() + extra + "\n")
    s.catch_up()
    assert {r["id"]: r["fact"] for r in s.listed(FactScope(order=Order.ID), Viewer.owner(), None)} == {
        **{fid: f"fact {i}" for i, fid in enumerate(ids)}, 7: "only in the copy"}
    assert not s.id_conflicts
    s.close()


def test_a_device_whose_slot_another_device_has_takes_a_new_id_before_minting(tmp_path):
    from brain.daemon.facts.sources import slot_of

    mine, theirs = "0123456789abcdef", "000000000001e0eb"
    assert slot_of(mine) == slot_of(theirs)  # one pair in about a million: found by search, kept here
    brain_dir = tmp_path / "v" / ".brain"
    (brain_dir / "facts").mkdir(parents=True)
    slot = slot_of(theirs)
    (brain_dir / "facts" / f"{theirs}.jsonl").write_text(json.dumps(
        {"op": "insert", "id": (1 << 20) + slot, "ts": "2026-01-01T00:00:00.000Z", "fact": "from the other"}) + "\n")
    device_file = tmp_path / "device"
    device_file.write_text(mine + "\n")
    s = SqliteFactsStore.for_vault(brain_dir, tmp_path / "c.sqlite", device_file)
    fid = _insert(s, "mine")
    assert s.slot != slot and fid % (1 << 20) == s.slot  # minted in a slot of its own
    assert device_file.read_text().strip() == s.device != mine
    assert not (brain_dir / "facts" / f"{mine}.jsonl").exists()
    s.close()


def test_doctor_names_a_reused_id_across_logs_and_lists_sync_copies(tmp_path, places):
    from daemon_fixtures import BRAIN

    vault = tmp_path / "v"
    brain_dir = vault / ".brain"
    s = _store(brain_dir, tmp_path, "a")
    fid = _insert(s, "minted here")
    s.close()
    rec = {"op": "insert", "id": fid, "ts": "2026-01-01T00:00:00.000Z", "fact": "pasted with the same id"}
    (brain_dir / "facts.jsonl").write_text(json.dumps(rec) + "\n")
    log = next((brain_dir / "facts").glob("*.jsonl"))
    shutil.copy(log, log.parent / f"{log.stem} (conflicted copy 2026-12-03).jsonl")
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False,
                                         "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
    env = {**child_env(), "BRAIN_VAULT": str(vault)}
    r = subprocess.run([BRAIN, "doctor", "facts", "--json"], capture_output=True, text=True, env=env, timeout=60)
    rows = json.loads(r.stdout)
    reused = [x["detail"] for x in rows if x["check"] == "reused ids"]
    assert len(reused) == 1 and f"reuses id {fid} of {log}" in reused[0] and "facts.jsonl line 1" in reused[0]
    assert any(x["check"] == "sync copies" and "conflicted copy" in x["detail"] for x in rows)


def test_what_only_a_sync_copy_holds_is_folded_into_this_devices_log_so_deleting_the_copy_loses_nothing(tmp_path):
    brain_dir = tmp_path / "v" / ".brain"
    brain_dir.mkdir(parents=True)
    ts = "2026-01-01T00:00:00.000Z"
    shared = json.dumps({"op": "insert", "id": 1, "ts": ts, "fact": "in both versions"}) + "\n"
    (brain_dir / "facts.jsonl").write_text(shared + json.dumps({"op": "insert", "id": 2, "ts": ts, "fact": "kept"}) + "\n")
    copy = brain_dir / "facts.sync-conflict-20261203-120000-ABCDEFG.jsonl"
    copy.write_text(shared + json.dumps({"op": "insert", "id": 2, "ts": ts, "fact": "the other version"}) + "\n"
                    + '{ "op": "expire", "id": 1, "ts": "2026-01-03T00:00:00.000Z", "reason": "gone on B" }\n')
    s = _store(brain_dir, tmp_path, "a")
    before = {r["id"]: (r["fact"], r["expire_reason"]) for r in s.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)}
    assert before[1] == ("in both versions", "gone on B") and before[2] == ("kept", None)
    assert ("the other version", None) in before.values()
    fid = _insert(s, "a new fact")
    _insert(s, "and another")  # folded once, not again
    own = s.log.path.read_text()
    assert own.count("the other version") == 1 and own.count("gone on B") == 1
    assert '{ "op": "expire", "id": 1,' in own  # copied byte for byte, so it is read once
    s.close()
    copy.unlink()
    s = _store(brain_dir, tmp_path, "a")
    after = {r["id"]: (r["fact"], r["expire_reason"]) for r in s.listed(FactScope(include_expired=True, order=Order.ID), Viewer.owner(), None)}
    assert after == {**before, fid: ("a new fact", None), fid + (1 << 20): ("and another", None)}
    s.close()
