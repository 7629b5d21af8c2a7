"""Writing parsed pages into the page tables (schema in db.py).

One PageTables owns the writer connection. Page and chunk ids come from
counters that only grow, so an id is never reused for another page or
chunk (the vector index keys on chunk ids). Unchanged chunks keep their ids
across edits: the diff is by content hash.
"""

from __future__ import annotations

import json
import sqlite3

from ..vault.parse import ParsedPage
from ..vault.problem_rows import ProblemRows
from ..vault.scan import FileStat, Problem
from ..vault.slugs import normalize_alias
from ..vault.timestamps import iso_ns, now_iso
from ..vault.wikilinks import LinkResolver

_IN_CHUNK = 900  # bound on SQL variables per statement
# a page's frontmatter `id`, which names it whatever its file is called (vault_changes.pair_renames);
# the LIKE spares the JSON parse on the pages that have none
STABLE_ID = "CASE WHEN frontmatter LIKE '%\"id\"%' THEN json_extract(frontmatter, '$.id') END AS stable_id"
_ROW = f"id, path, slug, tail, mtime_ns, size, content_hash, {STABLE_ID}"


def _empty_queue() -> dict[str, list]:
    return {"aliases": [], "links": [], "timeline": [], "chunks": []}


def _chunks(seq, n=_IN_CHUNK):
    seq = list(seq)
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


class PageTables(ProblemRows):
    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.next_page_id = self._counter("page_id_hwm", "pages")
        self.next_chunk_id = self._counter("chunk_id_hwm", "chunks")
        self._problem_paths: set[str] | None = None   # paths with a problem row (loaded lazily)
        self._queued = _empty_queue()

    def _counter(self, key: str, table: str) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        hwm = int(row[0]) if row else 0
        top = self.db.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0]
        return max(hwm, top) + 1

    # -- transactions ----------------------------------------------------------

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.flush()
        self.set_meta("page_id_hwm", str(self.next_page_id - 1))
        self.set_meta("chunk_id_hwm", str(self.next_chunk_id - 1))
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self._problem_paths = None
        self._queued = _empty_queue()
        self.next_page_id = self._counter("page_id_hwm", "pages")
        self.next_chunk_id = self._counter("chunk_id_hwm", "chunks")

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- lookups ---------------------------------------------------------------

    def by_path(self, rel: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM pages WHERE path = ?", (rel,)).fetchone()

    def by_slug(self, slug: str) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()

    def manifest(self) -> dict[str, sqlite3.Row]:
        """path → (id, path, slug, tail, mtime_ns, size, content_hash, stable_id) for every page."""
        rows = self.db.execute(f"SELECT {_ROW} FROM pages").fetchall()
        return {r["path"]: r for r in rows}

    def rows_at(self, paths: list[str]) -> dict[str, sqlite3.Row]:
        """path → the manifest's row, of the pages at these paths (at most _IN_CHUNK of them)."""
        rows = self.db.execute(f"SELECT {_ROW} FROM pages WHERE path IN ({','.join('?' * len(paths))})", paths)
        return {r["path"]: r for r in rows}

    def paths_under(self, folder: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT path FROM pages WHERE path >= ? AND path < ?",
                                              (folder + "/", folder + "/\U0010ffff"))]

    def problem_paths(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT DISTINCT path FROM problems")}

    def collision_paths(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT path FROM problems WHERE kind = 'slug_collision'")]

    # -- writes ----------------------------------------------------------------

    def touch(self, page_id: int, st: FileStat) -> None:
        """The file was saved without changing its bytes."""
        self.db.execute("UPDATE pages SET mtime_ns = ?, size = ?, updated_at = ? WHERE id = ?",
                        (st.mtime_ns, st.size, iso_ns(st.mtime_ns), page_id))

    def upsert(self, page: ParsedPage, st: FileStat, content_hash: str, existing: sqlite3.Row | None):
        """Write one page; returns (page_id, added chunk rows, removed chunk ids, all its chunk rows).

        All or nothing: a failure part-way leaves no trace of the page in
        this batch (the batch itself goes on).
        """
        marks = {k: len(v) for k, v in self._queued.items()}
        ids = (self.next_page_id, self.next_chunk_id)
        self.db.execute("SAVEPOINT page")
        try:
            out = self._upsert(page, st, content_hash, existing)
        except BaseException:
            self.db.execute("ROLLBACK TO page")
            self.db.execute("RELEASE page")
            for k, n in marks.items():
                del self._queued[k][n:]
            self.next_page_id, self.next_chunk_id = ids
            raise
        self.db.execute("RELEASE page")
        return out

    def _upsert(self, page: ParsedPage, st: FileStat, content_hash: str, existing: sqlite3.Row | None):
        now = now_iso()
        values = (
            page.slug, page.rel_path, page.title, page.title_key, page.tail, page.type, page.visibility,
            page.summary, page.lead, json.dumps(page.tags, ensure_ascii=False),
            json.dumps(page.frontmatter, ensure_ascii=False, default=str), page.frontmatter_error,
            iso_ns(st.mtime_ns), st.mtime_ns, st.size, content_hash, now,
        )
        db = self.db
        if existing is None:
            pid = self.next_page_id
            self.next_page_id += 1
            db.execute(
                "INSERT INTO pages(slug, path, title, title_key, tail, type, visibility, summary, lead, tags, "
                "frontmatter, frontmatter_error, updated_at, mtime_ns, size, content_hash, indexed_at, id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", values + (pid,))
            old_chunks = []
        else:
            pid = existing["id"]
            self.flush()  # nothing queued may outlive the deletes below
            db.execute(
                "UPDATE pages SET slug=?, path=?, title=?, title_key=?, tail=?, type=?, visibility=?, summary=?, "
                "lead=?, tags=?, frontmatter=?, frontmatter_error=?, updated_at=?, mtime_ns=?, size=?, "
                "content_hash=?, indexed_at=? WHERE id=?", values + (pid,))
            db.execute("DELETE FROM aliases WHERE page_id = ?", (pid,))
            db.execute("DELETE FROM links WHERE from_id = ?", (pid,))
            db.execute("DELETE FROM timeline WHERE page_id = ?", (pid,))
            old_chunks = db.execute("SELECT id, hash, ord, heading, heading_path FROM chunks WHERE page_id = ?",
                                    (pid,)).fetchall()
        # rows hanging off the page are queued and written together by flush()
        q = self._queued
        q["aliases"].extend((normalize_alias(a), a, pid) for a in page.aliases)
        q["links"].extend((pid, l.target, l.type, l.context, l.source, l.key, l.tail, l.task, l.due)
                          for l in page.links)
        q["timeline"].extend((pid, e.date, e.source, e.summary, e.detail) for e in page.timeline)
        added, removed, all_rows = self._diff_chunks(pid, page, old_chunks)
        return pid, added, removed, all_rows

    def flush(self) -> None:
        """Write the queued aliases, links, timeline rows and chunks (one statement per table)."""
        q, db = self._queued, self.db
        if q["aliases"]:
            db.executemany("INSERT OR IGNORE INTO aliases(alias, display, page_id) VALUES (?, ?, ?)", q["aliases"])
        if q["links"]:
            db.executemany("INSERT INTO links(from_id, target, to_id, type, context, source, target_key, target_tail, "
                           "task, due) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)", q["links"])
        if q["timeline"]:
            db.executemany("INSERT INTO timeline(page_id, date, source, summary, detail) VALUES (?, ?, ?, ?, ?)",
                           q["timeline"])
        if q["chunks"]:
            db.executemany("INSERT INTO chunks(id, page_id, ord, heading, heading_path, text, hash) "
                           "VALUES (?,?,?,?,?,?,?)", q["chunks"])
        self._queued = _empty_queue()

    def _diff_chunks(self, pid: int, page: ParsedPage, old_chunks):
        pool: dict[str, list] = {}
        for r in old_chunks:
            pool.setdefault(r["hash"], []).append(r)
        added, keep_updates, all_rows = [], [], []
        for c in page.chunks:
            reuse = pool.get(c.hash)
            if reuse:
                r = reuse.pop(0)
                if r["ord"] != c.ord or r["heading"] != c.heading or r["heading_path"] != c.heading_path:
                    keep_updates.append((c.ord, c.heading, c.heading_path, r["id"]))
                all_rows.append({"id": r["id"], "page_id": pid, "ord": c.ord, "heading": c.heading,
                                 "heading_path": c.heading_path, "text": c.text, "hash": c.hash})
                continue
            cid = self.next_chunk_id
            self.next_chunk_id += 1
            row = {"id": cid, "page_id": pid, "ord": c.ord, "heading": c.heading, "heading_path": c.heading_path,
                   "text": c.text, "hash": c.hash}
            added.append(row)
            all_rows.append(row)
        removed = [r["id"] for rows in pool.values() for r in rows]
        if removed:
            self.db.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in removed])
        if keep_updates:
            self.db.executemany("UPDATE chunks SET ord = ?, heading = ?, heading_path = ? WHERE id = ?", keep_updates)
        self._queued["chunks"].extend((r["id"], r["page_id"], r["ord"], r["heading"], r["heading_path"], r["text"],
                                       r["hash"]) for r in added)
        return added, removed, all_rows

    def delete(self, page_id: int) -> list[int]:
        """Remove a page and everything hanging off it; returns its chunk ids."""
        self.flush()  # queued rows may belong to this page
        removed = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE page_id = ?", (page_id,))]
        # links that pointed here become unresolved via ON DELETE SET NULL
        self.db.execute("DELETE FROM pages WHERE id = ?", (page_id,))
        return removed

    # -- links -----------------------------------------------------------------

    def resolve_links(self, from_ids: set[int], changed_tails: set[str]) -> int:
        """Re-resolve the links of `from_ids` and every link whose target tail changed; returns updates."""
        self.flush()
        if len(from_ids) > 5000:
            # most of the vault changed (a first index): walking every link in
            # id order beats thousands of lookups, and bounds the memory used
            resolver = LinkResolver(self.db.execute("SELECT id, slug, tail FROM pages").fetchall())
            n, last = 0, 0
            while True:
                rows = self.db.execute("SELECT id, target_key, target_tail, to_id FROM links WHERE id > ? "
                                       "ORDER BY id LIMIT 100000", (last,)).fetchall()
                if not rows:
                    return n
                n += self._apply_resolution(resolver, rows)
                last = rows[-1][0]
        rows = []
        for part in _chunks(from_ids):
            rows += self.db.execute(
                f"SELECT id, target_key, target_tail, to_id FROM links WHERE from_id IN ({','.join('?' * len(part))})",
                part).fetchall()
        seen = {r[0] for r in rows}
        for part in _chunks(changed_tails):
            for r in self.db.execute(
                    f"SELECT id, target_key, target_tail, to_id FROM links WHERE target_tail IN ({','.join('?' * len(part))})",
                    part):
                if r[0] not in seen:
                    rows.append(r)
        if not rows:
            return 0
        tails = {r[2] for r in rows if r[2]}
        if len(tails) > 2000:
            pages = self.db.execute("SELECT id, slug, tail FROM pages").fetchall()
        else:
            pages = []
            for part in _chunks(tails):
                pages += self.db.execute(
                    f"SELECT id, slug, tail FROM pages WHERE tail IN ({','.join('?' * len(part))})", part).fetchall()
        return self._apply_resolution(LinkResolver(pages), rows)

    def _apply_resolution(self, resolver: LinkResolver, rows) -> int:
        updates = []
        for lid, key, _tail, to_id in rows:
            new = resolver.resolve(key)
            if new != to_id:
                updates.append((new, lid))
        if updates:
            self.db.executemany("UPDATE links SET to_id = ? WHERE id = ?", updates)
        return len(updates)

    # -- problems (the rules: vault/problem_rows.py) ------------------------------

    def _delete_problems(self, path: str, echo: str) -> None:
        self.db.execute("DELETE FROM problems WHERE path = ?", (path,))
        self.db.execute("DELETE FROM problems WHERE kind = 'slug_collision' AND detail = ?", (echo,))

    def _insert_problem(self, p: Problem) -> None:
        self.db.execute("INSERT INTO problems(path, kind, detail) VALUES (?, ?, ?)", (p.path, p.kind, p.detail))

    def _delete_scan_problems(self, kinds: tuple[str, ...], under: str) -> None:
        marks = ",".join("?" * len(kinds))
        if under:
            self.db.execute(f"DELETE FROM problems WHERE kind IN ({marks}) AND (path = ? OR path LIKE ?)",
                            (*kinds, under, under.rstrip("/") + "/%"))
        else:
            self.db.execute(f"DELETE FROM problems WHERE kind IN ({marks})", kinds)
