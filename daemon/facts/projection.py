"""The facts table as the logs say it is: read every log from where the cache stopped.

docs/architecture.md, "The facts log behind the projection's offset", "Fact
ids" and "Two devices, one vault". For each log the cache keeps its read
offset, line count, first line, stat and the sha256 of the bytes it read; a
log whose read bytes changed, or that is gone, makes the whole table be
re-projected. An insert line whose id another line holds is read under an id
derived from its bytes, the line with precedence (`Source.precedence`)
keeping the id; an expiry for an id not read yet waits for its insert.
"""

from __future__ import annotations

from pathlib import Path

import hashlib
import logging
import sqlite3
import threading
import time
from typing import TYPE_CHECKING

from ..stores.fact_dates import date_words
from ..stores.fact_scope import COLUMNS, normalize_text
from .ids import claimed_in, derived_id, line_digest
from .schema import BAD_RECORD
from .sources import Source

log = logging.getLogger("brain.facts")


# A file written again within one tick of the file system's clock keeps its mtime and ctime: an older
# copy of the same length put in place just after our read has the stat we recorded. So a stat this
# recent proves nothing and the bytes are hashed (git's "racily clean" rule). 50 ms covers a coarse
# kernel clock (4-10 ms ticks); the cost is a hash of the log per read during a burst of writes.
RACY_S = 0.05


def _racy(stat_key: str) -> bool:
    try:
        ctime_ns = int(stat_key.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return True
    return time.time_ns() - ctime_ns < RACY_S * 1e9


class LogShrank(OSError):
    """A log got shorter while it was read (an older copy put in its place)."""


class Projection:
    """Mixin of SqliteFactsStore, which brings `db`, `lock`, `sources()` and `rebuild()`."""

    db: sqlite3.Connection
    lock: threading.RLock

    if TYPE_CHECKING:
        def sources(self) -> list[Source]: ...  # store.py

        def rebuild(self) -> int: ...  # store.py

        def settle_homes(self) -> None: ...  # home_rows.py

        def _home_now(self, filed: str | None) -> str | None: ...  # home_rows.py

    def _projection_state(self) -> None:
        self.bad_lines: list[tuple[int, str]] = []
        # (id, line that keeps it, later line, id the later line is read under, their logs)
        self.id_conflicts: list[tuple] = []
        self._hashers: dict[str, tuple] = {}  # log name → (sha256 of its first `upto` bytes, upto)
        self._own_stats: dict[str, str] = {}  # log name → its stat right after our own append
        self._moved = False
        self._homes_due: set[str] | None = set()   # filed names to resolve once the logs are read (home_rows.py)
        self._moves_cache: dict[str, str] | None = None   # the move records, from → to (home_rows.py)
        self._homes_lock = threading.Lock()
        self.full_projections = 0  # how many times every log was read from the start (a line may have gone)

    def catch_up(self) -> int:
        """Apply log lines the cache has not seen; returns how many were read."""
        for _attempt in range(8):
            try:
                return self._catch_up_once()
            except LogShrank as e:
                # another program put a shorter copy in place while it was read: read what is there now
                log.warning("%s; reading the logs again", e)
                self._hashers = {}
        return self._catch_up_once()

    def _catch_up_once(self) -> int:
        with self.lock:
            sources = self.sources()
            self.db.execute("BEGIN IMMEDIATE")
            try:
                reads = {r[0]: r for r in self.db.execute("SELECT name, offset, lines, head, sha, stat FROM log_reads")}
                full = not reads or bool(set(reads) - {s.name for s in sources}) or \
                    any(not self._intact(s, reads.get(s.name)) for s in sources)
                if full:
                    if reads:
                        log.warning("facts log changed under the cache; rebuilding the facts table")
                    self._clear()
                    self.full_projections += 1
                    reads = {}
                    self._claim_set_aside(sources)
                self._moved = False
                n = sum(self._read(s, reads.get(s.name)) for s in sources)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        if self._moved and not full:
            # an id changed hands mid-stream: project everything again in the one order a rebuild uses
            return self.rebuild()
        self.settle_homes()
        return n

    def _intact(self, src: Source, read) -> bool:
        """Whether the bytes of `src` the cache read are still there, unchanged.

        Re-hashed once per process, and again whenever the file changed other
        than by our own append (an edit of the same length, a copy renamed over it).
        """
        if read is None:
            return True
        _name, offset, _lines, head, sha, stat = read
        if offset == 0:
            return True
        if offset > src.log.size() or src.log.head_signature() != head:
            return False
        key = src.log.stat_key()
        held = self._hashers.get(src.name)
        if held and held[1] == offset and key in (stat, self._own_stats.get(src.name)) and not _racy(key):
            return True
        hasher = src.log.hash_range(hashlib.sha256(), 0, offset)
        if hasher is None:
            return False
        self._hashers[src.name] = (hasher, offset)
        return hasher.hexdigest() == sha

    def _read(self, src: Source, read) -> int:
        offset, line_no = (read[1], read[2]) if read else (0, 0)
        hasher, upto = self._hashers.get(src.name, (None, -1))
        if upto != offset:
            hasher = src.log.hash_range(hashlib.sha256(), 0, offset)
            if hasher is None:
                raise LogShrank(f"{src.log.path} shrank while it was read")
        read_from, n = offset, 0
        for line_no, rec, pos, err, raw in src.log.replay_lines(offset, line_no + 1):
            offset = pos
            # the hash covers the very bytes applied: hashing the range again afterwards could hash an
            # older copy of the same length put in place meanwhile, and the lines read would go unseen
            hasher.update(raw)
            n += 1
            # every id a line names is claimed, applied or not: ids are never reused
            self._claim(claimed_in(raw) if rec is None else [rec["id"]] if rec["op"] == "insert" else [])
            if rec is not None:
                try:
                    self._note_home(line_digest(raw), raw, src.order < 2)
                    self._apply(rec, src, line_no, line_digest(raw))
                except BAD_RECORD as e:
                    # a hand-edited or malformed record is a bad line, not a wedge
                    # (a failing database is not: that still raises, and the line is retried)
                    err = f"cannot apply the record: {e}"[:160]
            if err is not None:
                self.bad_lines.append((line_no, err if src.order == 0 else f"{src.name}: {err}"))
                log.warning("facts log %s line %d skipped: %s", src.name, line_no, err)
        self._hashers[src.name] = (hasher, offset)
        if n == 0 and read is not None and read[5] == src.log.stat_key():
            return 0  # nothing new: leave the row as it is
        self.db.execute("INSERT OR REPLACE INTO log_reads(name, offset, lines, head, sha, stat) VALUES (?,?,?,?,?,?)",
                        (src.name, offset, line_no, src.log.head_signature(), hasher.hexdigest(),
                         src.log.stat_key()))
        return n

    def _note_home(self, digest: str, raw: bytes, in_a_log: bool) -> None:
        """Which lines only a sync tool's copy holds: this device folds them into its own log at its
        next write, so deleting the copy loses nothing (docs/architecture.md, "Two devices, one vault")."""
        if in_a_log:
            self.db.execute("INSERT INTO line_homes(digest, in_log, raw) VALUES (?, 1, NULL) "
                            "ON CONFLICT(digest) DO UPDATE SET in_log = 1, raw = NULL", (digest,))
        else:
            self.db.execute("INSERT OR IGNORE INTO line_homes(digest, in_log, raw) VALUES (?, 0, ?)",
                            (digest, raw.strip()))

    def lines_only_in_copies(self, limit: int = 1000) -> list[bytes]:
        return [r[0] for r in self.db.execute(
            "SELECT raw FROM line_homes WHERE in_log = 0 ORDER BY rowid LIMIT ?", (limit,))]

    def _claim(self, ids) -> None:
        self.db.executemany("INSERT OR IGNORE INTO claimed_ids(id) VALUES (?)", [(i,) for i in ids])

    def _claim_set_aside(self, sources) -> None:
        """Torn lines kept beside a log claim the ids they name (docs/architecture.md, "Fact ids")."""
        for src in sources:
            for aside in sorted(src.log.path.parent.glob(src.log.path.name + ".torn-*")):
                try:
                    self._claim(claimed_in(aside.read_bytes()[:1 << 20]))
                except OSError:
                    continue

    def _clear(self) -> None:
        for table in ("facts", "facts_fts", "claimed_ids", "fact_lines", "pending_expires", "log_reads", "line_homes",
                      "call_keys", "entity_moves"):
            self.db.execute(f"DELETE FROM {table}")
        self.bad_lines, self.id_conflicts = [], []
        self._hashers = {}
        self._homes_due = None   # every filed name is looked at again once the logs are read
        self._moves_cache = None

    def _apply(self, rec: dict, src: Source, line_no: int, digest: str) -> None:
        if rec["op"] == "move":
            # the order moves are followed in is the logs' own (ts, then log and line): the same on every device
            self.db.execute("INSERT OR REPLACE INTO entity_moves(src, dst, ts, log, line_no) VALUES (?,?,?,?,?)",
                            (rec["from"], rec["to"], rec["ts"], src.name, line_no))
            self._homes_due, self._moves_cache = None, None
            return
        if rec["op"] == "expire":
            args = (rec["ts"], rec.get("reason"), rec.get("superseded_by"), rec["id"], rec["ts"])
            # the earliest expiry wins, whatever order the logs are read in
            cur = self.db.execute(
                "UPDATE facts SET expired_at=?, expire_reason=?, superseded_by=COALESCE(?, superseded_by) "
                "WHERE id=? AND (expired_at IS NULL OR expired_at > ?)", args)
            if cur.rowcount == 0 and not self.db.execute("SELECT 1 FROM facts WHERE id=?", (rec["id"],)).fetchone():
                # another device's expiry of a fact whose insert is in a log not read yet
                self.db.execute("INSERT INTO pending_expires(id, ts, reason, superseded_by) VALUES (?,?,?,?)",
                                args[3:4] + args[:3])
            return
        fid = self._id_for(rec["id"], src, line_no, digest)
        if fid is None:
            return
        valid_from = rec.get("valid_from") or rec["ts"]
        filed = rec.get("entity_slug")
        if filed is not None and not isinstance(filed, str):
            raise TypeError("entity_slug must be a string or null")
        if filed is not None and self._homes_due is not None:
            self._homes_due.add(filed)
        self.db.execute(
            f"INSERT OR REPLACE INTO facts({COLUMNS}, norm, filed_as) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                fid, rec["fact"], rec.get("kind", "fact"), self._home_now(filed),
                rec.get("visibility", "world"), rec.get("source", ""), rec.get("source_session"),
                rec.get("context"), float(rec.get("confidence", 1.0)), rec.get("notability", "medium"),
                valid_from, rec.get("valid_until"), rec["ts"], None, None, None,
                normalize_text(rec["fact"]), filed,
            ),
        )
        # the keyword index sees the fact and its dates (expiry is the facts row's business)
        self.db.execute("INSERT OR REPLACE INTO facts_fts(rowid, text, date) VALUES (?, ?, ?)",
                        (fid, rec["fact"], date_words(valid_from, rec.get("source"), rec["fact"])))
        self.db.execute("INSERT OR REPLACE INTO fact_lines(id, owned, ord, src, line_no, digest) VALUES (?,?,?,?,?,?)",
                        (fid, *src.precedence(rec["id"], line_no), digest))
        key = rec.get("call_key")
        if key is not None:
            # a key two lines claim (a hand edit, a merge) keeps its first fact
            self.db.execute("INSERT OR IGNORE INTO call_keys(key, fact_id) VALUES (?, ?)", (str(key), fid))
        for ts, reason, succ in self.db.execute(
                "SELECT ts, reason, superseded_by FROM pending_expires WHERE id=? ORDER BY ts", (fid,)).fetchall():
            self.db.execute("UPDATE facts SET expired_at=?, expire_reason=?, superseded_by=COALESCE(?, superseded_by) "
                            "WHERE id=? AND expired_at IS NULL", (ts, reason, succ, fid))
        self.db.execute("DELETE FROM pending_expires WHERE id=?", (fid,))

    def _id_for(self, fid: int, src: Source, line_no: int, digest: str) -> int | None:
        """The id an insert line is read under: its own, unless a line with precedence holds it.

        None for a copy of the line that holds it (a sync tool's duplicate): nothing new to read.
        """
        held = self.db.execute("SELECT owned, ord, src, line_no, digest FROM fact_lines WHERE id=?",
                               (fid,)).fetchone()
        if held is None:
            return fid
        if self.db.execute("SELECT 1 FROM fact_lines WHERE digest=?", (digest,)).fetchone():
            return None  # a copy of a line already read (a sync tool's duplicate, perhaps of a moved one)
        if src.precedence(fid, line_no) < tuple(held[:4]):
            # this line minted the id; the one read first moves aside
            moved = self._free_id(held[4])
            for sql in ("UPDATE facts SET id=? WHERE id=?", "UPDATE fact_lines SET id=? WHERE id=?",
                        "UPDATE fact_vectors SET id=? WHERE id=?"):
                self.db.execute(sql, (moved, fid))
            row = self.db.execute("SELECT text, date FROM facts_fts WHERE rowid=?", (fid,)).fetchone()
            self.db.execute("DELETE FROM facts_fts WHERE rowid=?", (fid,))
            if row:
                self.db.execute("INSERT INTO facts_fts(rowid, text, date) VALUES (?, ?, ?)", (moved, *row))
            self._note_conflict(fid, (src.name, line_no), (held[2], held[3]), moved)
            self._moved = True
            return fid
        new = self._free_id(digest)
        self._note_conflict(fid, (held[2], held[3]), (src.name, line_no), new)
        return new

    def _free_id(self, digest: str) -> int:
        attempt, new = 0, derived_id(digest)
        while self.db.execute("SELECT 1 FROM facts WHERE id=?", (new,)).fetchone():
            attempt += 1
            new = derived_id(digest, attempt)
        return new

    def _note_conflict(self, fid: int, keeps: tuple, later: tuple, new: int) -> None:
        self.id_conflicts.append((fid, keeps[1], later[1], new, keeps[0], later[0]))
        log.warning("facts log %s line %d reuses id %d (held by %s line %d); read as fact #%d",
                    later[0], later[1], fid, keeps[0], keeps[1], new)


def read_positions(cache_file: Path) -> dict[str, tuple[int, str]]:
    """log name → (offset, sha-256 of its bytes before it) the facts cache has read, opened read
    only (brain doctor checks the logs behind it); {} with no cache or one that cannot be read."""
    import sqlite3

    if not cache_file.exists():
        return {}
    try:
        db = sqlite3.connect(f"file:{cache_file}?mode=ro", uri=True, timeout=5)
        try:
            return {name: (offset, sha) for name, offset, sha in db.execute("SELECT name, offset, sha FROM log_reads")}
        finally:
            db.close()
    except sqlite3.Error:
        return {}
