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
import re
import sqlite3
import threading
from pathlib import Path

from .log import FactsLog
from ..private_files import private_dir
from .dates import date_words
from ...indexer.timestamps import iso, now_iso, utcnow

log = logging.getLogger("brain.facts")

SCHEMA_VERSION = 3  # 2: facts_fts, the keyword index over fact text; 3: call_keys

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    fact TEXT NOT NULL,
    norm TEXT NOT NULL,
    kind TEXT NOT NULL,
    entity_slug TEXT,
    visibility TEXT NOT NULL,
    source TEXT NOT NULL,
    source_session TEXT,
    context TEXT,
    confidence REAL NOT NULL,
    notability TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT,
    created_at TEXT NOT NULL,
    expired_at TEXT,
    expire_reason TEXT,
    superseded_by INTEGER
);
CREATE INDEX IF NOT EXISTS facts_entity ON facts(entity_slug, valid_from DESC, id DESC);
CREATE INDEX IF NOT EXISTS facts_created ON facts(created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS facts_valid_from ON facts(valid_from DESC, id DESC);
CREATE INDEX IF NOT EXISTS facts_session ON facts(source_session, created_at DESC);
CREATE INDEX IF NOT EXISTS facts_superseded ON facts(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    text, date, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- the idempotency key of the call that wrote each fact (docs/protocol.md §3.2)
CREATE TABLE IF NOT EXISTS call_keys (
    key TEXT PRIMARY KEY,
    fact_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS fact_vectors (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    vec BLOB NOT NULL
);
"""

_COLUMNS = (
    "id, fact, kind, entity_slug, visibility, source, source_session, context, confidence, "
    "notability, valid_from, valid_until, created_at, expired_at, expire_reason, superseded_by"
)


# SQLite's INTEGER is 64-bit signed
_MAX_ID = 1 << 63
# what a record whose fields have the wrong shape raises when applied
_BAD_RECORD = (KeyError, TypeError, ValueError, OverflowError,
               sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.IntegrityError)


def normalize_text(text: str) -> str:
    """What makes two facts 'the same text': case and whitespace ignored."""
    return re.sub(r"\s+", " ", text).strip().lower()


def _contains_ci(text, needle) -> bool:
    return isinstance(text, str) and isinstance(needle, str) and needle.lower() in text.lower()


def scope_clauses(where: list[str], args: list, active_only: bool, world_only: bool,
                  now: str | None = None) -> tuple[list[str], list]:
    """`where` plus the common filters (active, world-visible) as SQL clauses over `facts`."""
    clauses = list(where)
    params = list(args)
    if active_only:
        clauses.append("expired_at IS NULL AND (valid_until IS NULL OR valid_until > ?)")
        params.append(now or now_iso())
    if world_only:
        clauses.append("visibility = 'world'")
    return clauses, params


class FactsStore:
    """Append facts to the log, mirror them into SQLite, answer queries."""

    def __init__(self, log_path: Path, cache_db: Path):
        self.log = FactsLog(log_path)
        private_dir(cache_db.parent)
        self.db_path = cache_db
        self.db = sqlite3.connect(str(cache_db), check_same_thread=False, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        # recall's grep in SQL, with Python's case folding (SQLite's lower() folds ASCII only)
        self.db.create_function("contains_ci", 2, _contains_ci, deterministic=True)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.lock = threading.RLock()
        self.bad_lines: list[tuple[int, str]] = []
        self._writable = False
        # sha256 of the log's first `_hashed_upto` bytes, as read (see _prefix_intact)
        self._hasher, self._hashed_upto = hashlib.sha256(), 0
        self._own_stat = ""
        self._ensure_schema()
        self.catch_up()

    # -- schema and replay ------------------------------------------------

    def _ensure_schema(self) -> None:
        with self.lock:
            self.db.executescript(_SCHEMA)
            got = self._meta("schema_version")
            if got is not None and int(got) != SCHEMA_VERSION:
                # a cache from another version: drop it, the log rebuilds it
                # (fact vectors stay: each is keyed by model and text, so a stale one is never used)
                self.db.executescript("DROP TABLE facts; DROP TABLE meta; DROP TABLE facts_fts; "
                                      "DROP TABLE call_keys;")
                self.db.executescript(_SCHEMA)
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
                # the highest id an insert line claimed, applied or not: ids are never reused
                top = int(self._meta("log_max_id") or 0)
                if offset > self.log.size() or (offset and self._meta("log_head") != head) \
                        or not self._prefix_intact(offset):
                    log.warning("facts log changed under the cache; rebuilding the facts table")
                    self._clear()
                    offset, line_no, top = 0, 0, 0
                    self.bad_lines = []
                    self._hasher, self._hashed_upto = hashlib.sha256(), 0
                read_from = offset
                n = 0
                for line_no, rec, pos, err in self.log.replay(offset, line_no + 1):
                    offset = pos
                    n += 1
                    if rec is not None:
                        if rec["op"] == "insert" and 0 < rec["id"] < _MAX_ID:
                            top = max(top, rec["id"])
                        try:
                            self._apply(rec)
                        except _BAD_RECORD as e:
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
                self._set_meta("log_max_id", str(top))
                self._set_meta("log_head", head)
                self.db.execute("COMMIT")
                return n
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

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
        self.db.execute("DELETE FROM call_keys")

    def _apply(self, rec: dict) -> None:
        if rec["op"] == "insert":
            valid_from = rec.get("valid_from") or rec["ts"]
            self.db.execute(
                f"INSERT OR REPLACE INTO facts({_COLUMNS}, norm) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    rec["id"], rec["fact"], rec.get("kind", "fact"), rec.get("entity_slug"),
                    rec.get("visibility", "world"), rec.get("source", ""), rec.get("source_session"),
                    rec.get("context"), float(rec.get("confidence", 1.0)), rec.get("notability", "medium"),
                    valid_from, rec.get("valid_until"), rec["ts"], None, None, None,
                    normalize_text(rec["fact"]),
                ),
            )
            # the keyword index sees the fact and its dates (expiry is the facts row's business)
            self.db.execute("INSERT OR REPLACE INTO facts_fts(rowid, text, date) VALUES (?, ?, ?)",
                            (rec["id"], rec["fact"], date_words(valid_from, rec.get("source"))))
            key = rec.get("call_key")
            if key is not None:
                # a key two lines claim (a hand edit, a merge) keeps its first fact
                self.db.execute("INSERT OR IGNORE INTO call_keys(key, fact_id) VALUES (?, ?)", (str(key), rec["id"]))
        elif rec["op"] == "expire":
            self.db.execute(
                "UPDATE facts SET expired_at=?, expire_reason=?, superseded_by=COALESCE(?, superseded_by) "
                "WHERE id=? AND expired_at IS NULL",
                (rec["ts"], rec.get("reason"), rec.get("superseded_by"), rec["id"]),
            )

    def rebuild(self) -> int:
        """Drop the projection and replay the whole log."""
        with self.lock:
            self._clear()
            self.db.execute("DELETE FROM meta WHERE key LIKE 'log_%'")
            self.bad_lines = []
            self._hasher, self._hashed_upto = hashlib.sha256(), 0
        return self.catch_up()

    # -- writing ------------------------------------------------------------

    def _write(self, records: list[dict]) -> None:
        """Durably log, then mirror; the caller holds the lock."""
        self.catch_up()  # another process may have appended
        if not self._writable:
            self.log.open_for_append()
            self._writable = True
        self.log.append(records)
        self._own_stat = self.log.stat_key()  # our append: no need to re-hash the prefix
        self.catch_up()

    def next_id(self) -> int:
        row = self.db.execute("SELECT MAX(id) FROM facts").fetchone()
        return max(row[0] or 0, int(self._meta("log_max_id") or 0)) + 1

    def insert(self, *, fact: str, kind: str, entity_slug: str | None, visibility: str, source: str,
               valid_until: str | None, source_session: str | None = None, context: str | None = None,
               supersede: int | None = None, now: str | None = None, call_key: str | None = None) -> int:
        """Record a new fact (and, atomically, the expiry of the one it supersedes).

        `call_key` is the idempotency key of the call that wrote it, kept in
        the log so that a retry finds it after any restart (`by_call_key`).
        """
        with self.lock:
            self.catch_up()
            ts = now or now_iso()
            fid = self.next_id()
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
            self._write(records)
            return fid

    def expire(self, fid: int, reason: str | None) -> bool:
        """Expire a fact; False when it already was."""
        with self.lock:
            self.catch_up()
            row = self.get(fid)
            if row is None or row["expired_at"] is not None:
                return False
            self._write([{"op": "expire", "id": fid, "ts": now_iso(), "reason": reason or "forgotten"}])
            return True

    # -- reading ------------------------------------------------------------

    def get(self, fid: int) -> sqlite3.Row | None:
        with self.lock:
            return self.db.execute(f"SELECT {_COLUMNS} FROM facts WHERE id=?", (fid,)).fetchone()

    def query(self, where: list[str], args: list, order: str, limit: int | None,
              active_only: bool = True, world_only: bool = False, now: str | None = None) -> list[sqlite3.Row]:
        """Facts matching all `where` clauses, with the common filters applied in SQL."""
        clauses, params = scope_clauses(where, args, active_only, world_only, now)
        sql = f"SELECT {_COLUMNS} FROM facts"
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

    def by_call_key(self, key: str) -> sqlite3.Row | None:
        """The fact a call with this idempotency key wrote, expired or not."""
        with self.lock:
            self.catch_up()  # the key may be in lines another process appended
            row = self.db.execute("SELECT fact_id FROM call_keys WHERE key=?", (key,)).fetchone()
            return self.get(row[0]) if row else None

    def supersedes(self, fid: int) -> bool:
        """Whether fact `fid` expired another when it was written."""
        with self.lock:
            return self.db.execute("SELECT 1 FROM facts WHERE superseded_by=? LIMIT 1", (fid,)).fetchone() is not None

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
