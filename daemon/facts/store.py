"""Facts: the log on disk and the SQLite table derived from it.

The logs in `.brain` are the record (facts/sources.py says which);
`facts.sqlite` in the cache dir is a projection that remembers how far into
each log it has read, so opening costs only the new lines. Deleting the cache loses nothing: the next open replays the log and
gets the same ids.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .schema import SCHEMA, SCHEMA_VERSION, contains_ci
from .ids import MAX_ID, claimed_in, line_digest
from .log import FactsLog
from .home_rows import HomeRows
from .projection import Projection
from .restore import Restorer
from .reads import FactReads
from .vector_rows import FactVectorRows
from .sources import DEVICE_DIR, SLOTS, Source, device_log, discover, max_seq, slot_of
from .acked import AckJournal, journal_file
from .device import device_id
from ..private_files import private_dir
from ..protocol.errors import Unavailable
from ...indexer.vault.brain_folder import BrainFolderError, brain_folder
from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from ..stores.facts import Fact

if TYPE_CHECKING:
    from ..stores.pages import PagesStore
    from ..stores.vectors import FactVectorsStore

log = logging.getLogger("brain.facts")

# how stale a read may be about lines another device's log gained (docs/architecture.md, "Two devices, one vault")
READ_REFRESH_S = 1.0


class SqliteFactsStore(Projection, Restorer, FactReads, FactVectorRows, HomeRows):
    """Append facts to the log, mirror them into SQLite, answer queries.

    It implements the facts store contract (daemon/stores/facts.py); its reads are in reads.py,
    and it keeps the fact vectors' rows (vector_rows.py).

    Given one log file, that file is read and written and ids count up from 1.
    Given a vault's `.brain` folder and this device's id file
    (`SqliteFactsStore.for_vault`), every log there is read and this device writes
    its own, minting ids in its slot (docs/architecture.md, "Two devices, one vault").
    """

    @classmethod
    def for_vault(cls, brain_dir: Path, cache_db: Path, device_file: Path) -> "SqliteFactsStore":
        return cls(None, cache_db, brain_dir=brain_dir, device_file=device_file)

    def __init__(self, log_path: Path | None, cache_db: Path, *, brain_dir: Path | None = None,
                 device_file: Path | None = None):
        self.brain_dir = Path(brain_dir) if brain_dir is not None else None
        self.device_file = device_file
        self.slot: int | None = None
        # the lines this device acknowledged, beside its id (docs/architecture.md, "When an older log is put back")
        self.journal: AckJournal | None = None
        if self.brain_dir is not None:
            if device_file is None:
                raise TypeError("a store on a vault's .brain folder needs this device's id file")
            device, moved = device_id(device_file)
            self.journal = AckJournal(journal_file(device_file))
            if moved:
                log.warning("the state folder %s was copied from another machine or path; this device takes "
                            "a new id", device_file.parent)
                self.journal.forget_all()  # the original machine's acknowledgements, not this device's
            self._take_device(device)
        elif log_path is None:
            raise TypeError("a store needs a log file or a vault's .brain folder")
        else:
            self.log = FactsLog(log_path)
        private_dir(cache_db.parent)
        self.db_path = cache_db
        self.db = sqlite3.connect(str(cache_db), check_same_thread=False, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        # recall's grep in SQL, with Python's case folding (SQLite's lower() folds ASCII only)
        self.db.create_function("contains_ci", 2, contains_ci, deterministic=True)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.lock = threading.RLock()
        self._projection_state()
        self._writable = False
        self._written_top = 0  # the highest id this process put into a write, acknowledged or not
        self._refreshed = time.monotonic()
        self.vectors: "FactVectorsStore | None" = None  # the fact vectors, once the model has loaded
        self.homes_pages: "PagesStore | None" = None  # the pages filed names resolve against (home_rows.py)
        self._ensure_schema()
        self.catch_up()
        self._restore_quietly()

    # -- schema and replay ------------------------------------------------

    def _ensure_schema(self) -> None:
        with self.lock:
            self.db.executescript(SCHEMA)
            got = self._meta("schema_version")
            if got is not None and int(got) != SCHEMA_VERSION:
                # a cache from another version: drop it, the log rebuilds it
                # (fact vectors stay: each is keyed by model and text, so a stale one is never used)
                self.db.executescript("DROP TABLE facts; DROP TABLE meta; DROP TABLE facts_fts; "
                                      "DROP TABLE claimed_ids; DROP TABLE fact_lines; DROP TABLE pending_expires; "
                                      "DROP TABLE log_reads; DROP TABLE line_homes; DROP TABLE IF EXISTS call_keys; "
                                      "DROP TABLE IF EXISTS entity_moves;")
                self.db.executescript(SCHEMA)
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def rebuild(self) -> int:
        """Drop the projection and replay every log."""
        with self.lock:
            self.db.execute("DELETE FROM log_reads")
        return self.catch_up()

    def sources(self) -> list[Source]:
        """The logs read, in order: the one file given, or every log of the vault's `.brain`."""
        if self.brain_dir is None:
            return [Source(self.log.path.name, self.log, 0)]
        return discover(self.brain_dir)

    # -- writing ------------------------------------------------------------

    def _write(self, build) -> list[dict]:
        """Durably log the records `build()` makes, then mirror them; the caller holds the lock.

        Acknowledged means in the file at the path: a write that went to a file
        renamed away meanwhile, or that was glued to another program's
        unfinished line, is made again (docs/architecture.md, "When another
        program writes the log").
        """
        for _attempt in range(8):
            self._brain_folder_still_real()
            self.catch_up()  # another program may have appended, edited or replaced the log
            self._ready_to_append()
            checked = self.full_projections
            restored = self.unheld_acknowledged()
            records = build()  # ids minted past the journal's high-water mark too (next_id)
            # lines only a sync copy holds go into this device's log too (docs/architecture.md)
            folded = self.lines_only_in_copies() if self.brain_dir is not None else []
            if not records and not folded and not restored:
                self._acks_checked = checked
                return records
            # an id on its way to the log is taken even if the write is not acknowledged: a copy taken
            # meanwhile may hold the line and be put back later
            self._written_top = max([self._written_top, *(r["id"] for r in records if r["op"] == "insert")])
            start, payload = self.log.append(records, before=folded + restored)
            landed = self.log.landed(start, payload)
            if landed:
                self._own_stats[self._own_name()] = self.log.stat_key()  # our append: no re-hash needed
            self.catch_up()
            # read back, not only landed: a copy put in place between our append and this read (the same
            # bytes the cache had read, so nothing looks changed) would take our lines with it unseen
            if self._holds_all(payload, records):
                # (not landed: the file that replaced ours was copied after our write, so the lines are there)
                self._acknowledged(payload, records, restored, checked)
                return records
            log.warning("facts log changed while a fact was written; writing it again to the file at %s",
                        self.log.path)
        raise OSError(f"{self.log.path} kept changing while a fact was written; nothing was acknowledged")

    def _acknowledged(self, payload: bytes, records: list[dict], restored: list[bytes], checked: int) -> None:
        """Journal what is about to be acknowledged, before the caller is told."""
        if self.journal is not None:
            lines = payload.splitlines()
            self.journal.record(lines[len(lines) - len(records):])
            self._acks_checked = checked
        if restored:
            self.note_restored(restored)

    def _brain_folder_still_real(self) -> None:
        """Refuse the write when `.brain` became a link or a file while the daemon ran (brain_folder.py):
        the device and inode check of the log would follow a swapped folder out of the vault."""
        if self.brain_dir is None:
            return
        try:
            brain_folder(self.brain_dir.parent, create=False)
        except BrainFolderError as e:
            log.error("%s", e)
            # the caller may be remote: the reason without this machine's paths
            raise Unavailable("the vault's .brain folder is no longer a real folder inside the vault; "
                              "nothing was written",
                              suggestion="the vault's owner runs `brain doctor` to see what .brain points to") from e

    def _holds_all(self, payload: bytes, records: list[dict]) -> bool:
        """Whether every line of `payload` (the records, and the lines written again or folded in
        before them) is now read from a log."""
        return all(self.db.execute("SELECT 1 FROM line_homes WHERE digest=? AND in_log=1",
                                   (line_digest(line),)).fetchone() for line in payload.splitlines() if line.strip())

    def _own_name(self) -> str:
        return self.log.path.name if self.brain_dir is None else f"{DEVICE_DIR}/{self.log.path.name}"

    def _vault(self) -> tuple[Path, Path]:
        """The `.brain` folder and this device's id file, of a store opened on a vault (`for_vault`)."""
        if self.brain_dir is None or self.device_file is None:
            raise TypeError("a store on one log file has no device")
        return self.brain_dir, self.device_file

    def _take_device(self, device: str) -> None:
        self.device = device
        self.slot = slot_of(device)
        self.log = FactsLog(device_log(self._vault()[0], device))
        self._writable = False

    def _ready_to_append(self) -> None:
        """The descriptor is the file at the path, which ends where the projection read to."""
        changed = False
        if self.brain_dir is not None:
            others = {s.slot for s in self.sources()
                      if s.order == 1 and s.slot is not None and s.log.path != self.log.path}
            if self.slot in others:
                # another device's log has this slot: take a new device id before minting any id in it
                log.warning("device slot %d is also another device's; this device takes a new id", self.slot)
                self.log.close()
                self._take_device(device_id(self._vault()[1], avoid_slots=others, renew=True)[0])
        if not self._writable or not self.log.held_is_current():
            # first write, or the file was replaced (a sync tool or editor renamed a copy over it)
            self.log.reopen()
            self._writable = changed = True
        if not self.log.ends_on_line_boundary():
            # another program's unfinished line: set aside so our record is a line of its own
            self.log.repair_torn_tail()
        if self.log.set_aside:
            self._claim([i for tail in self.log.set_aside for i in claimed_in(tail)])
            self.log.set_aside.clear()
            changed = True
        if changed:
            self.catch_up()  # read what the file now at the path holds before an id is minted

    def next_id(self) -> int:
        """One past the highest id any line ever claimed (never past MAX_ID: then the lowest free one);
        on a device, the next id in its slot past every id claimed."""
        top = self.db.execute("SELECT MAX(id) FROM claimed_ids WHERE id <= ?", (MAX_ID,)).fetchone()[0] or 0
        top = max(top, self._written_top)
        if self.journal is not None:
            # an older copy of the log put back no longer claims what this device minted since
            top = max(top, self.journal.minted)
        if self.slot is not None:
            return self._next_in_slot(top, self.slot)
        fid = top + 1
        while fid <= MAX_ID and self.db.execute("SELECT 1 FROM facts WHERE id=?", (fid,)).fetchone():
            fid += 1
        if fid <= MAX_ID:
            return fid
        row = self.db.execute(
            "SELECT MIN(c.id + 1) FROM (SELECT 0 AS id UNION ALL SELECT id FROM claimed_ids) c WHERE c.id < ? "
            "AND NOT EXISTS (SELECT 1 FROM claimed_ids d WHERE d.id = c.id + 1) "
            "AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.id = c.id + 1)", (MAX_ID,)).fetchone()
        return row[0]

    def _next_in_slot(self, top: int, slot: int) -> int:
        seq = top // SLOTS + 1  # past every id seen, so ids grow with time across devices
        if seq > max_seq(slot):
            own = self.db.execute("SELECT MAX(id) FROM claimed_ids WHERE id % ? = ? AND id > ?",
                                  (SLOTS, slot, SLOTS)).fetchone()[0] or 0
            seq = own // SLOTS + 1
        while seq <= max_seq(slot):
            fid = seq * SLOTS + slot
            if not self.db.execute("SELECT 1 FROM facts WHERE id=? UNION ALL SELECT 1 FROM claimed_ids WHERE id=?",
                                   (fid, fid)).fetchone():
                return fid
            seq += 1
        raise OSError(f"device slot {slot} has no ids left; fix: delete {self.device_file} for a new device id")

    def _claimed(self, fid: int) -> bool:
        return bool(self.db.execute("SELECT 1 FROM facts WHERE id=? UNION ALL SELECT 1 FROM claimed_ids WHERE id=?",
                                    (fid, fid)).fetchone())

    def insert(self, *, fact: str, kind: str, entity_slug: str | None, visibility: str, source: str,
               valid_until: str | None, source_session: str | None = None, context: str | None = None,
               supersede: int | None = None, now: str | None = None, call_key: str | None = None) -> int:
        """Record a new fact (and, atomically, the expiry of the one it supersedes).

        `call_key` is the idempotency key of the call that wrote it, kept in
        the log so that a retry finds it after any restart (`by_call_key`).
        """
        ts = now or now_iso()
        chosen: list[int] = []

        def build() -> list[dict]:
            # minted after the log was re-read, so no line holds it; a write made again keeps its id while
            # nothing claims it, so a copy that caught the first attempt holds the same line
            fid = chosen[0] if chosen and not self._claimed(chosen[0]) else self.next_id()
            chosen[:] = [fid]
            records = [{
                "op": "insert", "id": fid, "ts": ts, "fact": fact, "kind": kind,
                "entity_slug": entity_slug, "visibility": visibility, "source": source,
                "source_session": source_session, "context": context, "confidence": 1.0,
                "notability": "medium", "valid_from": ts, "valid_until": valid_until,
            }]
            if call_key is not None:
                records[0]["call_key"] = call_key
            if supersede is not None:
                records.append({"op": "expire", "id": supersede, "ts": ts,
                                "reason": f"superseded by fact #{fid}", "superseded_by": fid})
            return records

        with self.lock:
            return self._write(build)[0]["id"]

    def expire(self, fid: int, reason: str | None) -> bool:
        """Expire a fact; False when it already was."""
        with self.lock:
            self.catch_up()
            row = self.get(fid, Viewer.owner())
            if row is None or row["expired_at"] is not None:
                return False
            ts = now_iso()
            self._write(lambda: [{"op": "expire", "id": fid, "ts": ts, "reason": reason or "forgotten"}])
            return True

    def mirror(self, facts: Sequence[Fact]) -> int:
        """Write into this device's log the facts a shared store minted (docs/scaling.md, "Who writes
        what"): each with the store's id, and its expiry once it has one. What the logs already hold
        is left as it is; the number of records written."""
        with self.lock:
            self.catch_up()

            def build() -> list[dict]:
                records: list[dict] = []
                for f in facts:
                    have = self.get(f.id, Viewer.owner())
                    if have is None:
                        records.append({
                            "op": "insert", "id": f.id, "ts": f.created_at, "fact": f.fact, "kind": f.kind,
                            "entity_slug": f.entity_slug, "visibility": f.visibility, "source": f.source,
                            "source_session": f.source_session, "context": f.context, "confidence": f.confidence,
                            "notability": f.notability, "valid_from": f.valid_from, "valid_until": f.valid_until})
                    if f.expired_at is not None and (have is None or have.expired_at is None):
                        record: dict = {"op": "expire", "id": f.id, "ts": f.expired_at,
                                        "reason": f.expire_reason or "forgotten"}
                        if f.superseded_by is not None:
                            record["superseded_by"] = f.superseded_by
                        records.append(record)
                return records

            if not build():
                return 0
            return len(self._write(build))

    # -- reading ------------------------------------------------------------

    def refresh(self) -> None:
        """Before a read: take in what other devices' logs gained since (at most once a second)."""
        if self.brain_dir is None or time.monotonic() - self._refreshed < READ_REFRESH_S:
            return
        self._refreshed = time.monotonic()
        try:
            self.catch_up()
        except (OSError, sqlite3.Error) as e:  # the reader still gets what the cache holds
            log.warning("facts logs could not be re-read: %s", e)
            return
        self._restore_quietly()

    def attach_vectors(self, vectors: "FactVectorsStore") -> None:
        """Rank by meaning too from now on (search.py); until then ranking is by keyword."""
        self.vectors = vectors

    def close(self) -> None:
        self.log.close()
        with self.lock:
            self.db.close()
