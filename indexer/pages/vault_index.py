"""VaultIndex: the vault's pages kept in the page tables and the keyword index.

Every change — the start-up reconcile, a batch of watcher events, a
put_page — goes through `apply`, which re-reads the disk state of the paths
it is given (indexer/vault/vault_changes.py), so events only say *where* to
look, never *what* happened. Unchanged files (same mtime and size, or same
bytes) cost no parse. What each file becomes is decided by the pass both
backends share (indexer/vault/indexing_pass.py); this class keeps the SQLite
tables and the keyword index. Writes use a connection of their own; readers
share the engine's connection and see only committed batches. The index only
writes: search and the page reads are the pages store's (store.py,
store_files.py), over the same tables and this keyword index.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, cast

from .db import open_db
from .keyword import KeywordIndex
from ..vault.indexing_pass import IndexingPass, PageTableWrites
from ..vault.parse import ParsedPage
from .page_tools import PageOps, owned_elsewhere
from .table_writes import PageTables
from ..vault.scan import FileStat
from ..vault.timestamps import now_iso
from ..vault.vault_changes import PageRow, Read, disk_state, row_stable_id

log = logging.getLogger("brain.indexer")

# how long a deleted page's bytes may come back as a moved page (the watcher's delete, then its create)
GONE_WINDOW_S = 30.0


class VaultIndex(IndexingPass, PageOps):
    def __init__(self, vault: Path, db: sqlite3.Connection, cache_dir: Path, *, read_only: bool = False):
        super().__init__(vault)
        self.db = db                     # readers: the engine's connection
        self.cache_dir = Path(cache_dir)
        self.read_only = read_only
        self.on_chunks_changed: list[Callable] = []   # f(added chunk rows, removed chunk ids) after each commit
        # f(moves) after an apply that changed pages' names: moves = [(old slug, new slug)] of pages whose
        # file moved, kept in the tables until every listener took them (docs/architecture.md, "Entity identity")
        self.on_pages_changed: list[Callable[[list[tuple[str, str]]], None]] = []
        self.last_sync: str | None = _meta(db, "last_sync")   # when a batch last committed
        self.last_report: dict | None = None
        self._lock = threading.RLock()
        self._gone: dict[str, tuple] = {}        # content hash → (slug, frontmatter id, when) of pages just deleted
        self._born: dict[str, tuple] = {}        # … and of pages just new to the index
        self._names_changed = False              # the current apply changed what some name resolves to
        self._late_moves: list[tuple[str, str]] = []   # moves found by _came_back in the current apply
        self.wdb: sqlite3.Connection | None = None
        self.tables: PageTables | None = None
        self.keyword: KeywordIndex | None
        try:
            self.keyword = KeywordIndex(self.cache_dir / "keyword", read_only=read_only)
        except (OSError, ValueError):
            if not read_only:
                raise
            self.keyword = None          # nothing indexed yet and not ours to create
        if not read_only:
            row = db.execute("PRAGMA database_list").fetchone()
            self.wdb = wdb = open_db(Path(row[2]))
            # the link indexes are keyed by name, so inserts land all over the
            # b-trees: a bigger page cache keeps a whole-vault pass off the disk
            wdb.execute("PRAGMA cache_size = -65536")
            wdb.execute("PRAGMA temp_store = MEMORY")
            self.tables = PageTables(wdb)
            self._check_keyword()

    @property
    def writing(self) -> PageTables:
        """The tables' write side; a read-only index has none, and never reaches a write."""
        if self.tables is None:
            raise owned_elsewhere()
        return self.tables

    @property
    def writing_keyword(self) -> KeywordIndex:
        """The keyword index's write side: a writable index always opens one (or fails to open)."""
        if self.keyword is None:
            raise owned_elsewhere()
        return self.keyword

    # -- keeping the keyword index in step with the tables ----------------------

    def _check_keyword(self) -> None:
        """Rebuild the keyword index from the tables when it is missing, stale or torn."""
        chunks = self.writing.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        dirty = self.writing.meta("keyword_dirty") == "1"
        if not (self.writing_keyword.fresh or dirty or self.writing_keyword.num_docs() != chunks):
            return
        log.info("rebuilding the keyword index from the page tables (%d chunks)", chunks)
        self.writing_keyword.clear()
        pages = self.writing.db.execute("SELECT id, slug, title, tags, type, visibility FROM pages").fetchall()
        aliases: dict[int, list[str]] = {}
        for alias, pid in self.writing.db.execute("SELECT COALESCE(NULLIF(display, ''), alias), page_id FROM aliases"):
            aliases.setdefault(pid, []).append(alias)
        by_page: dict[int, list] = {}
        for cid, pid, heading, path, text in self.writing.db.execute(
                "SELECT id, page_id, heading, heading_path, text FROM chunks ORDER BY page_id, ord"):
            by_page.setdefault(pid, []).append((cid, heading, path, text))
        for p in pages:
            self.writing_keyword.add_page(p["id"], slug=p["slug"], title=p["title"], aliases=aliases.get(p["id"], []),
                                          tags=json.loads(p["tags"] or "[]"), ptype=p["type"], visibility=p["visibility"],
                                          chunks=by_page.get(p["id"], []))
        self.writing_keyword.commit()
        self.writing.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('keyword_dirty', '0')")

    # -- the one way in -----------------------------------------------------------

    def reconcile(self, progress: Callable[[int, int], None] | None = None) -> dict:
        """Bring the tables in line with the whole vault (start-up, `brain index`)."""
        return self.apply(full=True, progress=progress)

    def apply(self, paths: Iterable[str] = (), dirs: Iterable[str] = (), moves: Iterable[tuple[str, str]] = (),
              *, full: bool = False, progress: Callable[[int, int], None] | None = None) -> dict:
        """Re-read the given paths (and folders) from disk and index what changed."""
        if self.read_only:
            raise owned_elsewhere()
        with self._lock:
            self._late_moves = []
            self._names_changed = False   # set by a page added, deleted, renamed or renamed inside
            paths, dirs, moves = set(paths), set(dirs), list(moves)
            full = self._reload_rules(paths, full)
            try:
                report = self._apply(paths, dirs, moves, full, progress)
            except BaseException:
                # leave no half batch behind: the next apply starts clean
                self.writing.rollback()
                self.writing_keyword.rollback()
                raise
            self.last_report = report
            if self._names_changed or self.pending_moves():
                self._tell_pages_changed()
            return report

    # -- pages that moved ------------------------------------------------------------

    def pending_moves(self) -> list[tuple[str, str]]:
        """(old slug, new slug) of moved pages the listeners have not taken yet."""
        raw = self.tables.meta("pending_moves") if self.tables is not None else None
        return [tuple(m) for m in json.loads(raw)] if raw else []

    def _tell_pages_changed(self) -> None:
        moves = self.pending_moves()
        try:
            for cb in list(self.on_pages_changed):
                cb(list(moves))
        except Exception:
            # kept: the next apply hands them over again
            log.warning("a pages-changed listener failed; the page moves are kept for the next change", exc_info=True)
            return
        if moves:
            self.writing.db.execute("DELETE FROM meta WHERE key = 'pending_moves'")

    def rename(self, old_rel: str, new_rel: str) -> dict:
        """A file moved: the page keeps its id, and links follow the new name."""
        return self.apply([old_rel, new_rel], moves=[(old_rel, new_rel)])

    def _apply(self, paths, dirs, moves, full, progress) -> dict:
        state = disk_state(self.vault, self.rules, self._writes(), paths, dirs, moves, full)
        gone_rows = self._gone_rows(state)
        reads: dict[str, Read] = {}
        pairs = self._pair(state, gone_rows, moves, reads)
        self._begin()
        report = self._index_changes(state, gone_rows, pairs, reads, full, progress)
        self._note_moves(pairs)
        self._finish()
        return report

    # -- the pass's hooks (indexing_pass.py) --------------------------------------------

    def _writes(self) -> PageTableWrites:
        return self.writing

    def _drop_gone(self, row: PageRow, full: bool) -> None:
        self._delete_row(row)
        if not full:
            self._note_gone(row)

    def _store(self, rel: str, st: FileStat, page: ParsedPage, h: str, row: PageRow | None,
               trust_stat: bool) -> int:
        t = self.writing
        renamed = row is not None and row["path"] != rel
        if row is None and not trust_stat:   # a whole-vault pass pairs its moves itself (pair_renames)
            self._came_back(page.slug, h, page.frontmatter.get("id"))
        before = self._names_of(row["id"]) if row is not None and not renamed else None
        # every row the pass holds came from these tables (manifest, rows_at): a sqlite3.Row
        pid, added, removed, all_rows = t.upsert(page, st, h, cast("sqlite3.Row | None", row))
        if before is None or before != self._names_of(pid):
            self._names_changed = True
        if row is not None:
            self.writing_keyword.delete_page(pid)
        self.writing_keyword.add_page(pid, slug=page.slug, title=page.title, aliases=page.aliases, tags=page.tags,
                                      ptype=page.type, visibility=page.visibility,
                                      chunks=[(r["id"], r["heading"], r["heading_path"], r["text"]) for r in all_rows])
        self._added.extend(added)
        self._removed.extend(removed)
        return pid

    def _deleted(self, row: PageRow, chunk_ids: list[int]) -> None:
        self._names_changed = True
        self._removed.extend(chunk_ids)
        self.writing_keyword.delete_page(row["id"])

    # The watcher may report a move into a folder it does not watch yet as two changes, a new file
    # and a deleted one, in either order and in batches of their own: each side is remembered for
    # GONE_WINDOW_S, and the other side, when it comes with the same bytes (or frontmatter id), makes
    # the pair a move (docs/architecture.md, "Entity identity").

    def _note_gone(self, row) -> None:
        """A page deleted: the page born moments ago with its bytes is it, moved; else remember it."""
        sid = row_stable_id(row)
        born = self._recent(self._born, row["content_hash"], sid)
        if born is not None:
            if born[0] != row["slug"]:
                self._late_moves.append((row["slug"], born[0]))
        elif row["content_hash"]:
            self._gone[row["content_hash"]] = (row["slug"], sid, time.monotonic())

    def _came_back(self, slug: str, content_hash: str, stable_id) -> None:
        """A page new to the index: the page deleted moments ago with its bytes is it, moved; else remember it."""
        gone = self._recent(self._gone, content_hash, stable_id)
        if gone is not None:
            if gone[0] != slug:
                self._late_moves.append((gone[0], slug))
        elif content_hash:
            self._born[content_hash] = (slug, stable_id, time.monotonic())

    @staticmethod
    def _recent(seen: dict, content_hash: str, stable_id):
        """Take from `seen` the entry (slug, frontmatter id, when) with these bytes or this frontmatter
        id, if it is recent enough; forget the stale ones on the way."""
        now = time.monotonic()
        for k in [k for k, v in seen.items() if now - v[2] >= GONE_WINDOW_S]:
            del seen[k]
        if content_hash and content_hash in seen:
            return seen.pop(content_hash)
        if stable_id is not None:
            for k, v in seen.items():
                if v[1] is not None and str(v[1]) == str(stable_id):
                    return seen.pop(k)
        return None

    def _note_moves(self, pairs) -> None:
        """Keep, in the batch that moves them, the slugs of the pages whose file moved."""
        moves, self._late_moves = self._late_moves, []
        for rel, old in pairs.items():
            row = self.writing.by_path(rel)
            if row is not None and row["id"] == old["id"] and row["slug"] != old["slug"]:
                moves.append((old["slug"], row["slug"]))
        if moves:
            self.writing.set_meta("pending_moves", json.dumps(self.pending_moves() + moves))

    def _names_of(self, pid: int) -> tuple:
        """What entity names resolve by on a page (title, visibility, aliases): a change of any
        re-files the facts of names that may now mean it, or no longer (docs/architecture.md, "Entity identity")."""
        row = self.writing.db.execute(
            "SELECT title_key, visibility, (SELECT group_concat(alias, char(10)) FROM "
            "(SELECT alias FROM aliases WHERE page_id = ? ORDER BY alias)) FROM pages WHERE id = ?", (pid, pid)).fetchone()
        return tuple(row) if row is not None else ()

    def _open_batch(self) -> None:
        self._added: list[dict] = []
        self._removed: list[int] = []
        self.writing.begin()

    def _finish(self, resolve: bool = True) -> None:
        t = self.writing
        try:
            if resolve:
                t.resolve_links(self._from_ids, self._tails)
            self.last_sync = now_iso()
            t.set_meta("last_sync", self.last_sync)
            t.set_meta("keyword_dirty", "1")
            t.commit()
        except BaseException:
            t.rollback()
            self.writing_keyword.rollback()
            raise
        self.writing_keyword.commit()
        self.writing.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('keyword_dirty', '0')")
        self.stats["commits"] += 1
        if self._added or self._removed:
            for cb in list(self.on_chunks_changed):
                try:
                    cb(list(self._added), list(self._removed))
                except Exception:
                    log.warning("a chunks-changed listener failed", exc_info=True)

    # -- state ------------------------------------------------------------------------

    def status(self) -> dict:
        q = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "pages": q("SELECT COUNT(*) FROM pages"),
            "chunks": q("SELECT COUNT(*) FROM chunks"),
            "links": q("SELECT COUNT(*) FROM links"),
            "unresolved_links": q("SELECT COUNT(*) FROM links WHERE to_id IS NULL"),
            "problems": q("SELECT COUNT(*) FROM problems"),
            "last_sync": self.last_sync,
            "pending_events": self.pending_events,
            "watching": self.sync.mode if self.sync else None,
            "read_only": self.read_only,
        }

    def problems(self) -> list[dict]:
        return [dict(r) for r in self.db.execute("SELECT path, kind, detail FROM problems ORDER BY kind, path")]

    def unresolved_links(self, limit: int = 50) -> list[dict]:
        # one row per (page, target): a page naming a missing page three times is one finding
        rows = self.db.execute("SELECT p.slug, l.target, min(l.source) AS source FROM links l "
                               "JOIN pages p ON p.id = l.from_id WHERE l.to_id IS NULL "
                               "GROUP BY p.slug, l.target ORDER BY p.slug, l.target LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    def close(self) -> None:
        self._stop_watching()
        with self._lock:
            if self.keyword is not None:
                self.keyword.close()
            if self.wdb is not None:
                self.wdb.close()
                self.wdb = None


def _meta(db, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None
