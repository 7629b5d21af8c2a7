"""Facts: the log on disk and the SQLite table derived from it.

`facts.jsonl` is the record; `facts.sqlite` in the cache dir is a projection
that remembers how far into the log it has read, so opening costs only the
new lines. Deleting the cache loses nothing: the next open replays the log and
gets the same ids.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import sqlite3
import threading
from pathlib import Path

from .schema import BAD_RECORD, COLUMNS, SCHEMA, SCHEMA_VERSION, contains_ci, normalize_text, scope_clauses
from .ids import MAX_ID, claimed_in, derived_id, line_digest
from .log import FactsLog
from ..private_files import private_dir
from .dates import date_words
from ...indexer.timestamps import iso, now_iso, utcnow

log = logging.getLogger("brain.facts")


class FactsStore:
    """Append facts to the log, mirror them into SQLite, answer queries."""

    def __init__(self, log_path: Path, cache_db: Path):
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
        self.bad_lines: list[tuple[int, str]] = []
        # (id, line that keeps it, later line, id the later line is read under): docs/architecture.md, "Fact ids"
        self.id_conflicts: list[tuple[int, int, int, int]] = []
        self._writable = False
        # sha256 of the log's first `_hashed_upto` bytes, as read (see _prefix_intact)
        self._hasher, self._hashed_upto = hashlib.sha256(), 0
        self._own_stat = ""
        self._ensure_schema()
        self.catch_up()

    # -- schema and replay ------------------------------------------------

    def _ensure_schema(self) -> None:
        with self.lock:
            self.db.executescript(SCHEMA)
            got = self._meta("schema_version")
            if got is not None and int(got) != SCHEMA_VERSION:
                # a cache from another version: drop it, the log rebuilds it
                # (fact vectors stay: each is keyed by model and text, so a stale one is never used)
                self.db.executescript("DROP TABLE facts; DROP TABLE meta; DROP TABLE facts_fts; "
                                      "DROP TABLE IF EXISTS claimed_ids; DROP TABLE IF EXISTS fact_lines;")
                self.db.executescript(SCHEMA)
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def catch_up(self) -> int:
        """Apply log lines the cache has not seen; returns how many were read."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                offset = int(self._meta("log_offset") or 0)
                line_no = int(self._meta("log_lines") or 0)
                head = self.log.head_signature()
                if offset > self.log.size() or (offset and self._meta("log_head") != head) \
                        or not self._prefix_intact(offset):
                    log.warning("facts log changed under the cache; rebuilding the facts table")
                    self._clear()
                    offset, line_no = 0, 0
                    self._hasher, self._hashed_upto = hashlib.sha256(), 0
                if offset == 0:
                    self.bad_lines, self.id_conflicts = [], []
                    self._claim_set_aside()
                read_from = offset
                n = 0
                for line_no, rec, pos, err, raw in self.log.replay_lines(offset, line_no + 1):
                    offset = pos
                    n += 1
                    # every id a line names is claimed, applied or not: ids are never reused
                    self._claim(claimed_in(raw) if rec is None else [rec["id"]] if rec["op"] == "insert" else [])
                    if rec is not None:
                        try:
                            self._apply(rec, line_no, line_digest(raw))
                        except BAD_RECORD as e:
                            # a hand-edited or malformed record is a bad line, not a wedge
                            # (a failing database is not: that still raises, and the line is retried)
                            err = f"cannot apply the record: {e}"[:160]
                    if err is not None:
                        self.bad_lines.append((line_no, err))
                        log.warning("facts.jsonl line %d skipped: %s", line_no, err)
                if offset > read_from and self.log.hash_range(self._hasher, read_from, offset) is None:
                    raise OSError(f"{self.log.path} shrank while it was read")
                self._hashed_upto = offset
                self._set_meta("log_prefix_sha256", self._hasher.hexdigest())
                self._set_meta("log_stat", self.log.stat_key())
                self._set_meta("log_offset", str(offset))
                self._set_meta("log_lines", str(line_no))
                self._set_meta("log_head", head)
                self.db.execute("COMMIT")
                return n
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def _claim(self, ids) -> None:
        self.db.executemany("INSERT OR IGNORE INTO claimed_ids(id) VALUES (?)", [(i,) for i in ids])

    def _claim_set_aside(self) -> None:
        """Torn lines kept beside the log claim the ids they name (docs/architecture.md, "Fact ids")."""
        for aside in sorted(self.log.path.parent.glob(self.log.path.name + ".torn-*")):
            try:
                self._claim(claimed_in(aside.read_bytes()[:1 << 20]))
            except OSError:
                continue

    def _prefix_intact(self, offset: int) -> bool:
        """Whether the log's first `offset` bytes are still the ones projected.

        A hand edit behind the read position (inserted lines, or a change of
        the same length) would otherwise never be seen. Checked by hash once
        per process, and again whenever the file changed other than by our
        own append (docs/architecture.md, "The vault folder").
        """
        if offset == 0:
            return True
        key = self.log.stat_key()
        if self._hashed_upto == offset and key in (self._meta("log_stat"), self._own_stat):
            return True
        hasher = self.log.hash_range(hashlib.sha256(), 0, offset)
        if hasher is None:
            return False
        want = self._meta("log_prefix_sha256")
        self._hasher, self._hashed_upto = hasher, offset
        return want is None or hasher.hexdigest() == want  # None: a cache from before the check

    def _clear(self) -> None:
        self.db.execute("DELETE FROM facts")
        self.db.execute("DELETE FROM facts_fts")
        self.db.execute("DELETE FROM claimed_ids")
        self.db.execute("DELETE FROM fact_lines")

    def _apply(self, rec: dict, line_no: int, digest: str) -> None:
        if rec["op"] == "insert":
            fid = self._id_for(rec["id"], line_no, digest)
            if fid is None:
                return
            valid_from = rec.get("valid_from") or rec["ts"]
            self.db.execute(
                f"INSERT OR REPLACE INTO facts({COLUMNS}, norm) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    fid, rec["fact"], rec.get("kind", "fact"), rec.get("entity_slug"),
                    rec.get("visibility", "world"), rec.get("source", ""), rec.get("source_session"),
                    rec.get("context"), float(rec.get("confidence", 1.0)), rec.get("notability", "medium"),
                    valid_from, rec.get("valid_until"), rec["ts"], None, None, None,
                    normalize_text(rec["fact"]),
                ),
            )
            # the keyword index sees the fact and its dates (expiry is the facts row's business)
            self.db.execute("INSERT OR REPLACE INTO facts_fts(rowid, text, date) VALUES (?, ?, ?)",
                            (fid, rec["fact"], date_words(valid_from, rec.get("source"))))
            self.db.execute("INSERT OR REPLACE INTO fact_lines(id, line_no, digest) VALUES (?, ?, ?)",
                            (fid, line_no, digest))
        elif rec["op"] == "expire":
            self.db.execute(
                "UPDATE facts SET expired_at=?, expire_reason=?, superseded_by=COALESCE(?, superseded_by) "
                "WHERE id=? AND expired_at IS NULL",
                (rec["ts"], rec.get("reason"), rec.get("superseded_by"), rec["id"]),
            )

    def _id_for(self, fid: int, line_no: int, digest: str) -> int | None:
        """The id an insert line is read under: its own, unless an earlier different line holds it.

        None for a copy of the line that holds it (a sync tool's duplicate): nothing new to read.
        """
        held = self.db.execute("SELECT line_no, digest FROM fact_lines WHERE id=?", (fid,)).fetchone()
        if held is None:
            return fid
        if held[1] == digest:
            return None
        attempt = 0
        new = derived_id(digest)
        while self.db.execute("SELECT 1 FROM facts WHERE id=?", (new,)).fetchone():
            attempt += 1
            new = derived_id(digest, attempt)
        self.id_conflicts.append((fid, held[0], line_no, new))
        log.warning("facts.jsonl line %d reuses id %d (held by line %d); read as fact #%d", line_no, fid, held[0], new)
        return new

    def rebuild(self) -> int:
        """Drop the projection and replay the whole log."""
        with self.lock:
            self._clear()
            self.db.execute("DELETE FROM meta WHERE key LIKE 'log_%'")
            self.bad_lines = []
            self._hasher, self._hashed_upto = hashlib.sha256(), 0
        return self.catch_up()

    # -- writing ------------------------------------------------------------

    def _write(self, build) -> list[dict]:
        """Durably log the records `build()` makes, then mirror them; the caller holds the lock.

        Acknowledged means in the file at the path: a write that went to a file
        renamed away meanwhile, or that was glued to another program's
        unfinished line, is made again (docs/architecture.md, "When another
        program writes the log").
        """
        for _attempt in range(8):
            self.catch_up()  # another program may have appended, edited or replaced the log
            self._ready_to_append()
            records = build()
            start, payload = self.log.append(records)
            if self.log.landed(start, payload):
                self._own_stat = self.log.stat_key()  # our append: no need to re-hash the prefix
                self.catch_up()
                return records
            log.warning("facts log changed while a fact was written; writing it again to the file at %s",
                        self.log.path)
        raise OSError(f"{self.log.path} kept changing while a fact was written; nothing was acknowledged")

    def _ready_to_append(self) -> None:
        """The descriptor is the file at the path, which ends where the projection read to."""
        if not self._writable or not self.log.held_is_current():
            # first write, or the file was replaced (a sync tool or editor renamed a copy over it)
            self.log.reopen()
            self._writable = True
        if not self.log.ends_on_line_boundary():
            # another program's unfinished line: set aside so our record is a line of its own
            self.log.repair_torn_tail()
        if self.log.set_aside:
            with self.lock:
                self._claim([i for tail in self.log.set_aside for i in claimed_in(tail)])
            self.log.set_aside.clear()
        self.catch_up()

    def next_id(self) -> int:
        """One past the highest id any line ever claimed (never past MAX_ID: then the lowest free one)."""
        top = self.db.execute("SELECT MAX(id) FROM claimed_ids WHERE id <= ?", (MAX_ID,)).fetchone()[0] or 0
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

    def insert(self, *, fact: str, kind: str, entity_slug: str | None, visibility: str, source: str,
               valid_until: str | None, source_session: str | None = None, context: str | None = None,
               supersede: int | None = None, now: str | None = None) -> int:
        """Record a new fact (and, atomically, the expiry of the one it supersedes)."""
        ts = now or now_iso()

        def build() -> list[dict]:
            fid = self.next_id()  # minted after the log was re-read, so no line holds it
            records = [{
                "op": "insert", "id": fid, "ts": ts, "fact": fact, "kind": kind,
                "entity_slug": entity_slug, "visibility": visibility, "source": source,
                "source_session": source_session, "context": context, "confidence": 1.0,
                "notability": "medium", "valid_from": ts, "valid_until": valid_until,
            }]
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
            row = self.get(fid)
            if row is None or row["expired_at"] is not None:
                return False
            ts = now_iso()
            self._write(lambda: [{"op": "expire", "id": fid, "ts": ts, "reason": reason or "forgotten"}])
            return True

    # -- reading ------------------------------------------------------------

    def get(self, fid: int) -> sqlite3.Row | None:
        with self.lock:
            return self.db.execute(f"SELECT {COLUMNS} FROM facts WHERE id=?", (fid,)).fetchone()

    def query(self, where: list[str], args: list, order: str, limit: int | None,
              active_only: bool = True, world_only: bool = False, now: str | None = None) -> list[sqlite3.Row]:
        """Facts matching all `where` clauses, with the common filters applied in SQL."""
        clauses, params = scope_clauses(where, args, active_only, world_only, now)
        sql = f"SELECT {COLUMNS} FROM facts"
        if clauses:
            sql += " WHERE " + " AND ".join(f"({c})" for c in clauses)
        sql += f" ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.lock:
            return self.db.execute(sql, params).fetchall()

    def active_for_entity(self, slug: str, world_only: bool, limit: int | None = None,
                          kind: str | None = None) -> list[sqlite3.Row]:
        where, args = ["entity_slug = ?"], [slug]
        if kind:
            where.append("kind = ?")
            args.append(kind)
        return self.query(where, args, "valid_from DESC, id DESC", limit, world_only=world_only)

    def count_active_for_entity(self, slug: str, world_only: bool, cap: int = 100) -> int:
        rows = self.query(["entity_slug = ?"], [slug], "id", cap, world_only=world_only)
        return len(rows)

    def find_same_text(self, entity_slug: str, text: str, world_only: bool = False) -> sqlite3.Row | None:
        rows = self.query(["entity_slug = ?", "norm = ?"], [entity_slug, normalize_text(text)], "id", 1,
                          world_only=world_only)
        return rows[0] if rows else None

    def hot(self, session_id: str | None, world_only: bool, limit: int = 10) -> list[sqlite3.Row]:
        if session_id:
            rows = self.query(["source_session = ?"], [session_id], "created_at DESC, id DESC", limit, world_only=world_only)
            if rows:
                return rows
        day_ago = iso(utcnow() - _dt.timedelta(days=1))
        return self.query(["created_at >= ?"], [day_ago], "created_at DESC, id DESC", limit, world_only=world_only)

    def counts(self, world_only: bool = False) -> dict:
        world = " AND visibility = 'world'" if world_only else ""
        with self.lock:
            total = self.db.execute("SELECT COUNT(*) FROM facts WHERE 1=1" + world).fetchone()[0]
            active = self.db.execute(
                "SELECT COUNT(*) FROM facts WHERE expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)"
                + world, (now_iso(),),
            ).fetchone()[0]
        return {"facts": total, "active_facts": active, "bad_log_lines": len(self.bad_lines)}

    def close(self) -> None:
        self.log.close()
        with self.lock:
            self.db.close()
