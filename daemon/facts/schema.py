"""The facts projection's tables (`facts.sqlite`)."""

from __future__ import annotations

import sqlite3


# 2: facts_fts, the keyword index over fact text; 3: several logs, claimed ids, the line each fact came from;
# 4: call_keys; 5: a fact's date words hold the days its text names relative to its own ("last Saturday");
# 6: filed_as and entity_moves: a fact's entity is the page its filed name means now (facts/homes.py);
# 7: facts_session ends with id, so a fact's neighbours step along its session (facts/neighbours.py)
SCHEMA_VERSION = 7

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    fact TEXT NOT NULL,
    norm TEXT NOT NULL,
    kind TEXT NOT NULL,
    entity_slug TEXT,                   -- the page the fact is about now (facts/homes.py)
    filed_as TEXT,                      -- the entity name the log line files it under
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
CREATE INDEX IF NOT EXISTS facts_filed ON facts(filed_as) WHERE filed_as IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_created ON facts(created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS facts_valid_from ON facts(valid_from DESC, id DESC);
-- a fact's neighbours: the next and previous fact of its conversation, by session_id when it has
-- one (facts_session), else by provenance (facts_thread) (facts/neighbours.py)
CREATE INDEX IF NOT EXISTS facts_session ON facts(source_session, created_at, id);
CREATE INDEX IF NOT EXISTS facts_thread ON facts(source, source_session, created_at, id);
CREATE INDEX IF NOT EXISTS facts_superseded ON facts(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    text, date, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- the logs' move records: a page's slug changed (docs/architecture.md, "Entity identity")
CREATE TABLE IF NOT EXISTS entity_moves (
    src TEXT NOT NULL, dst TEXT NOT NULL, ts TEXT NOT NULL, log TEXT NOT NULL, line_no INTEGER NOT NULL,
    PRIMARY KEY (log, line_no)
);
CREATE TABLE IF NOT EXISTS claimed_ids (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS fact_lines (
    id INTEGER PRIMARY KEY, owned INTEGER NOT NULL, ord INTEGER NOT NULL, src TEXT NOT NULL,
    line_no INTEGER NOT NULL, digest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fact_lines_digest ON fact_lines(digest);
CREATE TABLE IF NOT EXISTS pending_expires (id INTEGER NOT NULL, ts TEXT NOT NULL, reason TEXT, superseded_by INTEGER);
CREATE TABLE IF NOT EXISTS line_homes (digest TEXT PRIMARY KEY, in_log INTEGER NOT NULL, raw BLOB);
CREATE INDEX IF NOT EXISTS line_homes_copies ON line_homes(in_log) WHERE in_log = 0;
CREATE TABLE IF NOT EXISTS log_reads (
    name TEXT PRIMARY KEY, offset INTEGER NOT NULL, lines INTEGER NOT NULL, head TEXT NOT NULL,
    sha TEXT NOT NULL, stat TEXT NOT NULL
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

# what a record whose fields have the wrong shape raises when applied
BAD_RECORD = (KeyError, TypeError, ValueError, OverflowError,
               sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.IntegrityError)


def contains_ci(text: object, needle: object) -> bool:
    return isinstance(text, str) and isinstance(needle, str) and needle.lower() in text.lower()
