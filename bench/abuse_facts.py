"""Abuse of the facts logs by other writers, against real daemons (loopback only):

- facts file replaced: after each remember, the log the daemon writes is
  replaced by a copy renamed over it (a sync tool, `git pull`, `sed -i`);
- torn append: another program leaves an unfinished line at the end of the
  log before each remember;
- id reuse: hand lines reuse an acknowledged id, a legacy id, or an id past
  2^53−1, then more remembers;
- older log put back under writers: 4 writers remember through the daemon
  while another thread puts back older copies of the device log, by
  copy-then-rename and by writing them in place (`git checkout -- <log>`);
- sync between two copies: two vault copies, two daemons (two BRAIN_HOMEs),
  facts on both sides between syncs that copy, rename and make conflict copies.

Each attack counts acknowledged facts missing afterwards (`acked_lost`) and ids
that name two facts (`shared_ids`). docs/architecture.md, "When another
program writes the log", "Fact ids", "Two devices, one vault".
"""

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
from typing import Callable

PAGE = "# Me\n\nA page so the vault is not empty.\n"


class Device:
    """One machine: its own BRAIN_HOME and a daemon on its copy of the vault."""

    def __init__(self, vault: Path, scratch: Path, name: str):
        from brain.daemon import config as config_mod
        from brain.daemon.places import Places

        self.vault = vault
        # AF_UNIX socket paths must stay under ~108 bytes: a long scratch path gets a home under /tmp
        self.home = scratch / f"home-{name}" if len(str(scratch)) < 60 else \
            Path(tempfile.mkdtemp(prefix=f"af-{name}-", dir="/tmp"))
        self.places = Places.from_env({"BRAIN_HOME": str(self.home)})
        config_mod.save(self.places.config_file, {"vault": str(vault), "embeddings.enabled": False,
                                                  "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
        self.env = {**os.environ, "BRAIN_HOME": str(self.home), "BRAIN_VAULT": str(vault), "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "brain.daemon.server", "--vault", str(vault)],
                                     env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        from brain.daemon.rendezvous import read_pid_file

        deadline = time.monotonic() + 60
        while not (read_pid_file(self.places, vault) or {}).get("pid"):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the daemon did not start")
            time.sleep(0.05)

    def call(self, verb: str, args: dict) -> tuple[dict, bool]:
        from brain.daemon.client.calls import send

        return send(self.places, self.vault, verb, args)

    def remember(self, text: str) -> int | None:
        body, is_error = self.call("remember", {"fact": text, "provenance": "abuse"})
        return None if is_error else int(body["id"])

    def seen(self) -> dict[int, str]:
        body, is_error = self.call("recall", {"include_expired": True, "limit": 200})
        return {} if is_error else {int(f["fact_id"]): f["fact"] for f in body["facts"]}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


def _vault(root: Path) -> Path:
    (root / "people").mkdir(parents=True)
    (root / "people" / "me.md").write_text(PAGE)
    return root


def on_disk(vault: Path) -> dict[int, str]:
    """id → text of every insert line in every facts log now at its path (last line wins for display)."""
    found = {}
    brain_dir = vault / ".brain"
    logs = [p for p in [brain_dir / "facts.jsonl", *(brain_dir / "facts").glob("*.jsonl")] if p.is_file()]
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("op") == "insert":
                found.setdefault(rec.get("id"), rec.get("fact"))
    return found


def own_log(vault: Path) -> Path:
    """The log the daemon writes: its device log (or, for a brain from before device logs, facts.jsonl)."""
    return next((vault / ".brain" / "facts").glob("*.jsonl"), vault / ".brain" / "facts.jsonl")


def next_id_guess(vault: Path) -> int:
    """The id the daemon would mint next (docs/architecture.md, "Two devices, one vault")."""
    log, top = own_log(vault), max(on_disk(vault))
    if log.name == "facts.jsonl":
        return top + 1
    slot = json.loads(log.read_text().splitlines()[0])["id"] % (1 << 20)
    return (top // (1 << 20) + 1) * (1 << 20) + slot


def _rename_over(path: Path, extra: bytes = b"") -> None:
    tmp = path.with_name(f".{path.name}.sync-tmp")
    tmp.write_bytes(path.read_bytes() + extra)
    os.replace(tmp, path)


def _lost(acked: list[tuple[int, str]], vault: Path) -> int:
    disk = on_disk(vault)
    return sum(1 for fid, text in acked if disk.get(fid) != text)


def facts_file_replaced(scratch: Path, n: int = 12) -> dict:
    dev = Device(_vault(scratch / "v"), scratch, "r")
    acked, missing_now = [], 0
    try:
        for i in range(n):
            text = f"fact {i} written after the log was replaced"
            fid = dev.remember(text)
            if fid is not None:
                acked.append((fid, text))
                # the invariant: in the file at the path when the call returns
                missing_now += on_disk(dev.vault).get(fid) != text
            _rename_over(own_log(dev.vault))
        seen = dev.seen()
    finally:
        dev.stop()
    lost = _lost(acked, dev.vault)
    unseen = sum(1 for fid, text in acked if seen.get(fid) != text)
    broke = max(lost, missing_now) + unseen
    return {"attempts": n, "held": n - min(n, broke), "broke": min(n, broke), "acked_lost": lost,
            "note": f"{len(acked)} acked; {missing_now} missing at return, {lost} missing after, {unseen} unreadable"}


def torn_append(scratch: Path, n: int = 12) -> dict:
    dev = Device(_vault(scratch / "v"), scratch, "t")
    acked, reused = [], 0
    try:
        dev.remember("the first fact")
        for i in range(n):
            log = own_log(dev.vault)
            claim = next_id_guess(dev.vault)
            with open(log, "ab") as f:
                f.write(b'{"op":"insert","id":%d,"ts":"2026-01-01T00:00:00.000Z","fact":"unfinished %d' % (claim, i))
            text = f"fact {i} after a torn append"
            fid = dev.remember(text)
            if fid is not None:
                acked.append((fid, text))
                reused += fid == claim
        seen = dev.seen()
    finally:
        dev.stop()
    lost = _lost(acked, dev.vault)
    unseen = sum(1 for fid, text in acked if seen.get(fid) != text)
    broke = min(n, lost + reused + unseen)
    return {"attempts": n, "held": n - broke, "broke": broke, "acked_lost": lost, "ids_reused": reused,
            "note": f"{len(acked)} acked, {lost} lost, {reused} reused a torn line's id, {unseen} unreadable"}


def id_reuse(scratch: Path, n: int = 6) -> dict:
    vault = _vault(scratch / "v")
    (vault / ".brain").mkdir()
    legacy = vault / ".brain" / "facts.jsonl"
    rec = {"op": "insert", "ts": "2026-01-01T00:00:00.000Z", "kind": "fact", "source": "hand"}
    legacy.write_text("".join(json.dumps({**rec, "id": i, "fact": f"legacy {i}"}) + "\n" for i in (1, 2, 3)))
    dev = Device(vault, scratch, "i")
    acked = {i: f"legacy {i}" for i in (1, 2, 3)}
    hand = {}
    try:
        for i in range(n):
            text = f"acked fact {i}"
            fid = dev.remember(text)
            if fid is not None:
                acked[fid] = text
            # hand lines: one reusing the acked id, one reusing a legacy id, one past 2^53−1
            for reuse in (fid or 1, 1 + i % 3, (1 << 63) - 1):
                line = {**rec, "id": reuse, "fact": f"hand line {i} reusing {reuse}"}
                hand[line["fact"]] = reuse
                with open(legacy, "a") as f:
                    f.write(json.dumps(line) + "\n")
        after = dev.remember("written after the hand lines")
        time.sleep(1.1)
        seen = dev.seen()
    finally:
        dev.stop()
    moved = sum(1 for fid, text in acked.items() if seen.get(fid) != text)  # an acked id now names another fact
    texts = set(seen.values())
    unreadable = sum(1 for text, fid in hand.items() if fid < (1 << 53) and text not in texts)
    broke = min(n, moved + unreadable + (after is None))
    return {"attempts": n, "held": n - broke, "broke": broke, "acked_lost": moved,
            "note": f"{len(acked)} acked; {moved} acked ids moved or lost, {unreadable} hand facts unreadable, "
                    f"later remember {'failed' if after is None else 'ok'}"}


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".syncing.{path.name}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, path)


def sync(a: Path, b: Path, round_no: int) -> int:
    """A file-sync tool between two `.brain` folders: copy, replace the shorter, keep both when they diverged."""
    made = 0
    names = {p.relative_to(root / ".brain") for root in (a, b) for p in (root / ".brain").rglob("*")
             if p.is_file() and not p.name.startswith(".") and p.name != "writer.lock"}
    styles = ("{}.sync-conflict-20261203-12000{}-ABCDEFG.jsonl", "{} (conflicted copy 2026-12-0{}).jsonl",
              "{} {}.jsonl")
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
            copy = rel.parent / styles[round_no % 3].format(rel.name.removesuffix(".jsonl"), round_no + 2)
            for root in (a, b):
                _put(root / ".brain" / copy, lose)
                _put(root / ".brain" / rel, keep)
            made += 1
    return made


def sync_two_copies(scratch: Path, rounds: int = 3, per_round: int = 4) -> dict:
    a = _vault(scratch / "a")
    (a / ".brain").mkdir()
    (a / ".brain" / "facts.jsonl").write_text(json.dumps(
        {"op": "insert", "id": 1, "ts": "2026-01-01T00:00:00.000Z", "fact": "legacy 1", "kind": "fact"}) + "\n")
    b = scratch / "b"
    shutil.copytree(a, b)
    devs = [Device(a, scratch, "a"), Device(b, scratch, "b")]
    acked: dict[int, str] = {1: "legacy 1"}
    shared = conflicts = attempts = 0
    try:
        for r in range(rounds):
            for i in range(per_round):
                for k, dev in enumerate(devs):
                    attempts += 1
                    text = f"round {r} fact {i} on device {'AB'[k]}"
                    fid = dev.remember(text)
                    if fid is not None:
                        shared += fid in acked
                        acked.setdefault(fid, text)
            for k, dev in enumerate(devs):  # both sides also append by hand to the shared log: a conflict
                with open(dev.vault / ".brain" / "facts.jsonl", "a") as f:
                    f.write(json.dumps({"op": "insert", "id": 100 + 10 * k + r, "ts": "2026-01-02T00:00:00.000Z",
                                        "fact": f"hand {r} on {'AB'[k]}", "kind": "fact"}) + "\n")
                acked[100 + 10 * k + r] = f"hand {r} on {'AB'[k]}"
            conflicts += sync(a, b, r)
        # each device writes once more (folding in what only the copies hold), then the copies are deleted,
        # as people clean up after a sync tool
        for k, dev in enumerate(devs):
            fid = dev.remember(f"after the syncs on {'AB'[k]}")
            if fid is not None:
                shared += fid in acked
                acked.setdefault(fid, f"after the syncs on {'AB'[k]}")
        sync(a, b, rounds)
        for root in (a, b):
            for copy in (root / ".brain").rglob("*.jsonl"):
                if copy.name != "facts.jsonl" and not (copy.parent.name == "facts" and len(copy.stem) == 16):
                    copy.unlink()
        time.sleep(1.1)  # reads take in the other device's lines at most once a second
        views = [dev.seen() for dev in devs]
    finally:
        for dev in devs:
            dev.stop()
    lost = sum(1 for view in views for fid, text in acked.items() if view.get(fid) != text)
    shared += sum(1 for fid in set(views[0]) & set(views[1]) if views[0][fid] != views[1][fid])
    diverged = views[0] != views[1]
    broke = min(attempts, lost + shared + diverged)
    return {"attempts": attempts, "held": attempts - broke, "broke": broke, "acked_lost": lost, "shared_ids": shared,
            "note": f"{len(acked)} facts (incl. hand lines) over {rounds} syncs, {conflicts} conflict copies "
                    "(deleted at the end); "
                    f"{lost} missing from a device's view, {shared} shared ids, views "
                    f"{'differ' if diverged else 'equal'}"}


def texts_on_disk(vault: Path) -> dict[int, set]:
    """id → every different text the insert lines in the logs now at their paths give it."""
    found: dict[int, set] = {}
    for log in (vault / ".brain").rglob("*.jsonl"):
        for line in log.read_bytes().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("op") == "insert":
                found.setdefault(rec.get("id"), set()).add(rec.get("fact"))
    return found


def older_log_put_back(scratch: Path, writers: int = 4, seconds: float = 8.0) -> dict:
    """Writers keep remembering while older copies of the log are put back (docs/architecture.md,
    "When an older log is put back")."""
    import threading

    dev = Device(_vault(scratch / "v"), scratch, "o")
    acked: list[tuple[int, str]] = []
    refused = puts = 0
    stop = threading.Event()
    counts = threading.Lock()

    def writer(w: int) -> None:
        nonlocal refused
        i = 0
        while not stop.is_set():
            text = f"writer {w} fact {i}"
            fid = dev.remember(text)
            with counts:
                if fid is None:
                    refused += 1
                else:
                    acked.append((fid, text))
            i += 1

    def put_back() -> None:
        nonlocal puts
        snapshots: list[bytes] = []
        while not stop.is_set():
            log = own_log(dev.vault)
            try:
                snapshots.append(log.read_bytes())
                older = snapshots[max(0, len(snapshots) - 4)]
                if puts % 2:  # git checkout -- <log>: the older bytes written over the file in place
                    with open(log, "r+b") as f:
                        f.truncate(0)
                        f.write(older)
                else:  # a backup restore or a sync tool: copy, then rename over
                    tmp = log.with_name(f".{log.name}.restore-tmp")
                    tmp.write_bytes(older)
                    os.replace(tmp, log)
                puts += 1
            except FileNotFoundError:
                pass
            time.sleep(0.05)

    try:
        dev.remember("the first fact")
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
        threads.append(threading.Thread(target=put_back))
        for t in threads:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()
        time.sleep(1.1)  # a read takes in a changed log at most once a second, and writes back what it lacks
        seen = dev.seen()  # the newest facts (recall returns 100 at most), as the daemon reads them
    finally:
        dev.stop()
    disk = texts_on_disk(dev.vault)
    lost = sum(1 for fid, text in acked if text not in disk.get(fid, ()))
    two_texts = sum(1 for got in disk.values() if len(got) > 1) + \
        sum(1 for fid, text in acked if seen.get(fid, text) != text)
    n = len(acked) + refused
    broke = min(n, lost + two_texts)
    return {"attempts": n, "held": n - broke, "broke": broke, "acked_lost": lost, "shared_ids": two_texts,
            "note": f"{writers} writers, {puts} older copies put back; {len(acked)} acked, {refused} refused "
                    f"(not acknowledged), {lost} acked lost, {two_texts} ids naming two texts"}


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("facts file replaced", facts_file_replaced),
    ("torn append", torn_append),
    ("older log put back under writers", older_log_put_back),
    ("id reuse", id_reuse),
    ("sync between two copies", sync_two_copies),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
