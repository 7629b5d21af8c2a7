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


class FactsStore(Projection, Restorer, FactReads, FactVectorRows, HomeRows):
    """Append facts to the log, mirror them into SQLite, answer queries.

    It implements the facts store contract (daemon/stores/facts.py); its reads are in reads.py,
    and it keeps the fact vectors' rows (vector_rows.py).

    Given one log file, that file is read and written and ids count up from 1.
    Given a vault's `.brain` folder and this device's id file
    (`FactsStore.for_vault`), every log there is read and this device writes
    its own, minting ids in its slot (docs/architecture.md, "Two devices, one vault").
    """

    @classmethod
    def for_vault(cls, brain_dir: Path, cache_db: Path, device_file: Path) -> "FactsStore":
        return cls(None, cache_db, brain_dir=brain_dir, device_file=device_file)

    def __init__(self, log_path: Path | None, cache_db: Path, *, brain_dir: Path | None = None,
                 device_file: Path | None = None):
        self.brain_dir = Path(brain_dir) if brain_dir is not None else None
        self.device_file = device_file
        self.slot: int | None = None
        # the lines this device acknowledged, beside its id (docs/architecture.md, "When an older log is put back")
        self.journal: AckJournal | None = None
        if self.brain_dir is not None:
            device, moved = device_id(device_file)
            self.journal = AckJournal(journal_file(device_file))
            if moved:
                log.warning("the state folder %s was copied from another machine or path; this device takes "
                            "a new id", device_file.parent)
                self.journal.forget_all()  # the original machine's acknowledgements, not this device's
            self._take_device(device)
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
        """Whether every line of `payload` that `records` made is now read from a log."""
        lines = payload.splitlines()[-len(records):] if records else []
        return all(self.db.execute("SELECT 1 FROM line_homes WHERE digest=? AND in_log=1",
                                   (line_digest(line),)).fetchone() for line in lines)

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
