"""The page tables (SQLite in the cache dir) and their numbered migrations.

Pages keep an integer id for life, so a rename updates one row and the links
that pointed at the page follow it. Every lookup the entity card needs is an
indexed query here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

# Each migration runs once, in order; the index is disposable, but a schema
# change still goes through here so an old cache upgrades instead of breaking.
MIGRATIONS: list[str] = [
    # 1: pages, aliases, links, timeline, chunks, problems
    """
    CREATE TABLE pages (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL UNIQUE,          -- vault-relative real path
        title TEXT NOT NULL,
        title_key TEXT NOT NULL,            -- lower(title), for exact-title lookups
        tail TEXT NOT NULL,                 -- last slug segment, for suffix lookups
        type TEXT,
        visibility TEXT NOT NULL DEFAULT 'world',
        summary TEXT,                       -- frontmatter summary
        lead TEXT NOT NULL DEFAULT '',      -- first prose sentence of the body
        tags TEXT NOT NULL DEFAULT '[]',    -- JSON list
        frontmatter TEXT NOT NULL DEFAULT '{}',  -- JSON object
        frontmatter_error TEXT,
        updated_at TEXT NOT NULL,           -- file mtime, ISO ms Z
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        content_hash TEXT NOT NULL DEFAULT '',
        indexed_at TEXT NOT NULL,
        last_retrieved_at TEXT
    );
    CREATE INDEX pages_title_key ON pages(title_key);
    CREATE INDEX pages_tail ON pages(tail);
    CREATE INDEX pages_updated ON pages(updated_at, slug);

    CREATE TABLE aliases (
        alias TEXT NOT NULL,                -- normalize_alias()
        page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        PRIMARY KEY (alias, page_id)
    );
    CREATE INDEX aliases_page ON aliases(page_id);

    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        from_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        target TEXT NOT NULL,               -- the link text as written, e.g. "Alice Example"
        to_id INTEGER REFERENCES pages(id) ON DELETE SET NULL,   -- NULL = unresolved
        type TEXT NOT NULL DEFAULT 'mentions',   -- link type: works_at, invested_in, mentions, ...
        context TEXT,
        source TEXT NOT NULL                -- wikilink | markdown | frontmatter | inline-field
    );
    CREATE INDEX links_from ON links(from_id);
    CREATE INDEX links_to ON links(to_id);
    CREATE INDEX links_target ON links(target);

    CREATE TABLE timeline (
        page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        date TEXT NOT NULL,                 -- YYYY-MM-DD
        source TEXT NOT NULL DEFAULT 'markdown',
        summary TEXT NOT NULL,
        detail TEXT
    );
    CREATE INDEX timeline_page ON timeline(page_id, date DESC);

    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        heading TEXT,
        text TEXT NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX chunks_page ON chunks(page_id, ord);
    CREATE INDEX chunks_hash ON chunks(hash);

    CREATE TABLE problems (
        path TEXT NOT NULL,
        kind TEXT NOT NULL,                 -- conflict_copy | bad_frontmatter | slug_collision | unreadable | ...
        detail TEXT NOT NULL
    );
    CREATE INDEX problems_path ON problems(path);

    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    """,
    # 2: each link's slug-shaped key and its last segment, so the links that
    # may point at a page added, removed or renamed are found by index and
    # re-resolved without re-reading the pages that hold them (that index
    # replaces the one on the raw link text, which no query used)
    """
    ALTER TABLE links ADD COLUMN target_key TEXT NOT NULL DEFAULT '';
    ALTER TABLE links ADD COLUMN target_tail TEXT NOT NULL DEFAULT '';
    CREATE INDEX links_target_tail ON links(target_tail);
    DROP INDEX links_target;
    CREATE INDEX problems_kind ON problems(kind);
    """,
    # 3: backlink counts for a hub page (thousands of incoming links) read
    # only this index instead of every link row
    """
    CREATE INDEX links_to_cover ON links(to_id, source, from_id);
    """,
    # 4: each alias as the page writes it (for display; `alias` stays the
    # lookup key) and each chunk's heading path; titles now come from the file
    # name as written. Forgetting every page's stat and hash makes the next
    # reconcile re-parse the whole vault and fill all three in.
    """
    ALTER TABLE aliases ADD COLUMN display TEXT NOT NULL DEFAULT '';
    ALTER TABLE chunks ADD COLUMN heading_path TEXT NOT NULL DEFAULT '';
    UPDATE pages SET mtime_ns = 0, content_hash = '';
    """,
    # 5: privacy fails closed (docs/architecture.md "Private pages"): a page
    # whose frontmatter is refused, or whose visibility is not a plain public
    # word, is private now. Re-parse every page so none keeps an old answer.
    """
    UPDATE pages SET mtime_ns = 0, content_hash = '';
    """,
    # 6: every page gets a card chunk (title, summary or description, first
    # sentence) ahead of its body's chunks (indexer/vault/chunks.py page_card):
    # re-parse every page so each has one
    """
    UPDATE pages SET mtime_ns = 0, content_hash = '';
    """,
    # 7: a link written on an open task's line carries the task and its due
    # date, so a card finds the open tasks elsewhere that link its page by the
    # page's id (indexer/vault/tasks.py; docs/architecture.md "Open tasks").
    # The partial index holds task links only and covers the read, so a hub
    # page that thousands of tasks link never visits their rows. Re-parse
    # every page to fill them in.
    """
    ALTER TABLE links ADD COLUMN task TEXT;
    ALTER TABLE links ADD COLUMN due TEXT;
    CREATE INDEX links_task_to ON links(to_id, from_id, task, due) WHERE task IS NOT NULL;
    UPDATE pages SET mtime_ns = 0, content_hash = '';
    """,
]


def open_db(path: Path) -> sqlite3.Connection:
    """Open (creating or upgrading) the page tables."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    migrate(db)
    return db


def migrate(db: sqlite3.Connection) -> int:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    for i, sql in enumerate(MIGRATIONS[version:], start=version + 1):
        db.execute("BEGIN IMMEDIATE")
        for stmt in _statements(sql):
            db.execute(stmt)
        db.execute(f"PRAGMA user_version = {i}")
        db.execute("COMMIT")
    return len(MIGRATIONS)


def _statements(sql: str) -> list[str]:
    # executescript would commit our transaction; split on ';' instead
    # (the migrations contain no ';' inside literals)
    return [s.strip() for s in sql.split(";") if _has_sql(s)]


def _has_sql(s: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in s.splitlines())
