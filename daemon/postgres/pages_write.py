"""Parsed pages written into the PostgreSQL page tables (schema.py), a batch at a time.

The PostgreSQL twin of indexer/pages/table_writes.py, for the vault indexer
(indexer.py): a page keeps its id across edits and renames, and an unchanged
chunk (same content hash) keeps its id and so its vector; only new chunks
are inserted and only gone ones deleted. What hangs off the pages of a batch
(aliases, links, timeline, chunks) is queued and written at `flush` with COPY,
each chunk with its weighted keyword document (page_load.STAGED_DOCUMENT:
title and aliases A, headings B, path and tags C, body D).

Every statement runs inside the caller's transaction; nothing here commits.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from ...indexer.page_policy.terms import text_key
from ...indexer.vault.problem_rows import ProblemRows
from ...indexer.vault.parse import ParsedPage
from ...indexer.vault.scan import FileStat, Problem
from ...indexer.vault.slugs import normalize_alias
from ...indexer.vault.timestamps import iso_ns, now_iso
from ...indexer.vault.wikilinks import LinkResolver
from .page_load import STAGED_DOCUMENT, words

# what the indexer needs of a page row: the same keys the embedded manifest has
ROW = "id, path, slug, tail, mtime_ns, size, content_hash"
Row = dict[str, Any]

_STAGE = """
CREATE TEMP TABLE IF NOT EXISTS chunk_stage (
    chunk_id BIGINT, page_id BIGINT, ord INTEGER, heading TEXT, heading_path TEXT, heading_key TEXT,
    text TEXT, hash TEXT, names TEXT, headings TEXT, place TEXT, body TEXT
) ON COMMIT DELETE ROWS
"""
_KEEP_STAGED = f"""
UPDATE chunks c SET ord = s.ord, heading = s.heading, heading_path = s.heading_path,
       heading_key = s.heading_key, document = {STAGED_DOCUMENT}
FROM chunk_stage s WHERE s.chunk_id IS NOT NULL AND c.id = s.chunk_id
"""
_INSERT_STAGED = f"""
INSERT INTO chunks (page_id, ord, heading, heading_path, heading_key, text, hash, document)
SELECT s.page_id, s.ord, s.heading, s.heading_path, s.heading_key, s.text, s.hash, {STAGED_DOCUMENT}
FROM chunk_stage s WHERE s.chunk_id IS NULL
RETURNING id, page_id, ord, heading, heading_path, text, hash
"""
_PAGE_COLUMNS = ("slug, path, title, title_key, tail, type, visibility, summary, lead, tags, frontmatter, "
                 "frontmatter_error, updated_at, mtime_ns, size, content_hash, indexed_at")


def row_of(values: tuple[Any, ...]) -> Row:
    return dict(zip(("id", "path", "slug", "tail", "mtime_ns", "size", "content_hash"), values))


def _empty_queue() -> dict[str, list[Any]]:
    return {"aliases": [], "links": [], "timeline": [], "chunks": []}


class PgPageTables(ProblemRows):
    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self._queued = _empty_queue()
        self._problem_paths: set[str] | None = None
        self.removed: list[int] = []   # ids of the chunks this batch deleted (the vectors' work)
        self.added: list[dict[str, Any]] = []    # rows of the chunks this batch inserted

    def reset(self) -> None:
        """Forget what was queued and removed (a new batch, or the last one rolled back)."""
        self._queued = _empty_queue()
        self._problem_paths = None
        self.removed, self.added = [], []

    # -- lookups ------------------------------------------------------------------

    def rows_at(self, paths: list[str]) -> dict[str, Row]:
        return {r[1]: row_of(r) for r in self.conn.execute(f"SELECT {ROW} FROM pages WHERE path = ANY(%s)",
                                                           (paths,))}

    def manifest(self) -> dict[str, Row]:
        return {r[1]: row_of(r) for r in self.conn.execute(f"SELECT {ROW} FROM pages")}

    def paths_under(self, folder: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM pages WHERE path >= %s AND path < %s",
                                                (folder + "/", folder + "/\U0010ffff"))]

    def by_slug(self, slug: str) -> Row | None:
        r = self.conn.execute(f"SELECT {ROW} FROM pages WHERE slug = %s", (slug,)).fetchone()
        return row_of(r) if r else None

    def by_path(self, path: str) -> Row | None:
        return self.rows_at([path]).get(path)

    def problem_paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT DISTINCT path FROM problems")}

    def collision_paths(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT path FROM problems WHERE kind = 'slug_collision'")]

    # -- pages --------------------------------------------------------------------

    def touch(self, page_id: int, st: FileStat) -> None:
        """The file was saved without changing its bytes."""
        self.conn.execute("UPDATE pages SET mtime_ns = %s, size = %s, updated_at = %s WHERE id = %s",
                          (st.mtime_ns, st.size, iso_ns(st.mtime_ns), page_id))

    def upsert(self, page: ParsedPage, st: FileStat, content_hash: str, existing: Row | None, *,
               careful: bool = False) -> int:
        """Write one page row and queue what hangs off it. `careful`: the page and everything
        hanging off it are written at once inside a savepoint, so a page the database refuses
        leaves no trace and the batch goes on (the indexer's second try of a failed batch)."""
        if not careful:
            return self._upsert(page, st, content_hash, existing)
        marks = {k: len(v) for k, v in self._queued.items()}
        try:
            with self.conn.transaction():
                pid = self._upsert(page, st, content_hash, existing)
                self.flush()
                return pid
        except BaseException:
            for k, n in marks.items():
                del self._queued[k][n:]
            raise

    def _upsert(self, page: ParsedPage, st: FileStat, content_hash: str, existing: Row | None) -> int:
        values = (page.slug, page.rel_path, page.title, page.title_key, page.tail, page.type, page.visibility,
                  page.summary, page.lead, json.dumps(page.tags, ensure_ascii=False),
                  json.dumps(page.frontmatter, ensure_ascii=False, default=str), page.frontmatter_error,
                  iso_ns(st.mtime_ns), st.mtime_ns, st.size, content_hash, now_iso())
        if existing is None:
            made = self.conn.execute(f"INSERT INTO pages ({_PAGE_COLUMNS}) VALUES ({', '.join(['%s'] * 17)}) "
                                     "RETURNING id", values).fetchone()
            assert made is not None   # INSERT … RETURNING answers one row
            pid = int(made[0])
            old: list[tuple[Any, ...]] = []
        else:
            pid = int(existing["id"])
            self.flush()   # nothing queued for this page may outlive the deletes below
            sets = ", ".join(f"{c.strip()} = %s" for c in _PAGE_COLUMNS.split(","))
            self.conn.execute(f"UPDATE pages SET {sets} WHERE id = %s", (*values, pid))
            for table, column in (("aliases", "page_id"), ("links", "from_id"), ("timeline", "page_id")):
                self.conn.execute(f"DELETE FROM {table} WHERE {column} = %s", (pid,))
            old = self.conn.execute("SELECT id, hash FROM chunks WHERE page_id = %s", (pid,)).fetchall()
        q = self._queued
        seen: set[str] = set()
        for alias in page.aliases:
            key = normalize_alias(alias)
            if key and key not in seen:
                seen.add(key)
                q["aliases"].append((key, pid, alias))
        q["links"].extend((pid, ln.target, ln.type, ln.context, ln.source, ln.key, ln.tail, ln.task, ln.due)
                          for ln in page.links)
        q["timeline"].extend((pid, e.date, e.source, e.summary, e.detail) for e in page.timeline)
        self._queue_chunks(pid, page, old)
        return pid

    def _queue_chunks(self, pid: int, page: ParsedPage, old: list[tuple[Any, ...]]) -> None:
        """Keep the old chunk of each unchanged hash (its id and vector), queue the rest as new."""
        pool: dict[str, list[int]] = {}
        for cid, h in old:
            pool.setdefault(h, []).append(cid)
        names = words("\n".join([page.title, *page.aliases]))
        place = words(" ".join([page.slug, *page.tags]))
        for c in page.chunks:
            reuse = pool.get(c.hash)
            kept = reuse.pop(0) if reuse else None
            self._queued["chunks"].append((kept, pid, c.ord, c.heading, c.heading_path, text_key(c.heading), c.text,
                                           c.hash, names, words(c.heading_path or c.heading), place, words(c.text)))
        gone = [cid for ids in pool.values() for cid in ids]
        if gone:
            self.conn.execute("DELETE FROM chunks WHERE id = ANY(%s)", (gone,))
            self.removed.extend(gone)

    def delete(self, page_id: int) -> list[int]:
        """Remove a page and everything hanging off it (links into it become unresolved); its chunk ids."""
        self.flush()
        gone = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE page_id = %s", (page_id,))]
        self.conn.execute("DELETE FROM pages WHERE id = %s", (page_id,))
        self.removed.extend(gone)
        return gone

    def flush(self) -> None:
        """Write everything queued (the chunks it inserts are added to `added`)."""
        q, cur = self._queued, self.conn.cursor()
        self._queued = _empty_queue()
        if q["aliases"]:
            with cur.copy("COPY aliases (alias, page_id, display) FROM STDIN") as copy:
                for row in q["aliases"]:
                    copy.write_row(row)
        if q["links"]:
            with cur.copy("COPY links (from_id, target, type, context, source, target_key, target_tail, task, due) "
                          "FROM STDIN") as copy:
                for row in q["links"]:
                    copy.write_row(row)
        if q["timeline"]:
            with cur.copy("COPY timeline (page_id, date, source, summary, detail) FROM STDIN") as copy:
                for row in q["timeline"]:
                    copy.write_row(row)
        if not q["chunks"]:
            return
        self.conn.execute(_STAGE)
        self.conn.execute("TRUNCATE chunk_stage")
        with cur.copy("COPY chunk_stage FROM STDIN") as copy:
            for row in q["chunks"]:
                copy.write_row(row)
        self.conn.execute(_KEEP_STAGED)
        keys = ("id", "page_id", "ord", "heading", "heading_path", "text", "hash")
        self.added.extend(dict(zip(keys, r)) for r in self.conn.execute(_INSERT_STAGED).fetchall())

    # -- links --------------------------------------------------------------------

    def resolve_links(self, from_ids: set[int], changed_tails: set[str]) -> int:
        """Re-resolve the links out of `from_ids` and every link whose target's tail changed
        (as indexer/pages/table_writes.py does); returns how many changed."""
        if len(from_ids) > 5000:   # most of the vault: one pass over every link
            resolver = LinkResolver(self.conn.execute("SELECT id, slug, tail FROM pages").fetchall())
            rows = self.conn.execute("SELECT id, target_key, to_id FROM links").fetchall()
        else:
            rows = self.conn.execute("SELECT id, target_key, to_id FROM links WHERE from_id = ANY(%s) "
                                     "OR target_tail = ANY(%s)", (list(from_ids), list(changed_tails))).fetchall()
            tails = {(k or "").rsplit("/", 1)[-1] for _, k, _ in rows}
            resolver = LinkResolver(self.conn.execute("SELECT id, slug, tail FROM pages WHERE tail = ANY(%s)",
                                                      (list(tails),)).fetchall())
        updates = [(lid, new) for lid, key, to_id in rows if (new := resolver.resolve(key)) != to_id]
        if updates:   # copied in and applied by one statement: a first pass changes every link
            self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS link_stage (id BIGINT, to_id BIGINT) "
                              "ON COMMIT DELETE ROWS")
            self.conn.execute("TRUNCATE link_stage")
            with self.conn.cursor().copy("COPY link_stage (id, to_id) FROM STDIN") as copy:
                for update in updates:
                    copy.write_row(update)
            self.conn.execute("UPDATE links l SET to_id = s.to_id FROM link_stage s WHERE l.id = s.id")
        return len(updates)

    # -- problems -----------------------------------------------------------------

    def _delete_problems(self, path: str, echo: str) -> None:
        self.conn.execute("DELETE FROM problems WHERE path = %s", (path,))
        self.conn.execute("DELETE FROM problems WHERE kind = 'slug_collision' AND detail = %s", (echo,))

    def _insert_problem(self, p: Problem) -> None:
        self.conn.execute("INSERT INTO problems (path, kind, detail) VALUES (%s, %s, %s)",
                          (p.path, p.kind, p.detail))

    def _delete_scan_problems(self, kinds: tuple[str, ...], under: str) -> None:
        if under:
            self.conn.execute("DELETE FROM problems WHERE kind = ANY(%s) AND (path = %s OR path LIKE %s)",
                              (list(kinds), under, under.rstrip("/") + "/%"))
        else:
            self.conn.execute("DELETE FROM problems WHERE kind = ANY(%s)", (list(kinds),))

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO index_meta (key, value) VALUES (%s, %s) "
                          "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (key, value))
