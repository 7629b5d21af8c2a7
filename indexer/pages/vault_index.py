"""VaultIndex: the vault's pages kept in the page tables and the keyword index.

Every change — the start-up reconcile, a batch of watcher events, a
put_page — goes through `apply`, which re-reads the disk state of the paths
it is given (vault_changes.py), so events only say *where* to look, never
*what* happened. Unchanged files (same mtime and size, or same bytes) cost
no parse. Writes use a connection of their own; readers share the engine's
connection and see only committed batches. The index only writes: search and
the page reads are the pages store's (store.py, store_files.py), over the
same tables and this keyword index.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from .db import open_db
from .keyword import KeywordIndex
from ..vault.frontmatter import MAX_FRONTMATTER_BYTES
from ..vault.parse import parse_page, parse_stub
from ..vault.vault_files import content_hash
from .page_tools import PageOps, owned_elsewhere
from .table_writes import PageTables
from ..page_policy.problems import collision_echo
from ..vault.timestamps import now_iso
from ..vault.scan import IGNORE_FILE, FileStat, IgnoreRules, Problem, classify, read_head, read_page, stat_page
from ..vault.slugs import path_to_slug
from ..vault.vault_changes import disk_state, pair_renames, row_stable_id, scan_kinds_paths

log = logging.getLogger("brain.indexer")

BATCH_PAGES = 500   # pages per commit: a `git checkout` of 1,000 files is 2 commits
FULL_BATCH_PAGES = 2000   # a whole-vault pass commits less often (each commit fsyncs)
STUB_HEAD_BYTES = MAX_FRONTMATTER_BYTES + 8192   # room for the largest frontmatter block read
# how long a deleted page's bytes may come back as a moved page (the watcher's delete, then its create)
GONE_WINDOW_S = 30.0


class VaultIndex(PageOps):
    def __init__(self, vault: Path, db: sqlite3.Connection, cache_dir: Path, *, read_only: bool = False):
        self.vault = Path(vault)
        self.db = db                     # readers: the engine's connection
        self.cache_dir = Path(cache_dir)
        self.read_only = read_only
        self.on_chunks_changed: list[Callable] = []   # f(added chunk rows, removed chunk ids) after each commit
        # f(moves) after an apply that changed pages' names: moves = [(old slug, new slug)] of pages whose
        # file moved, kept in the tables until every listener took them (docs/architecture.md, "Entity identity")
        self.on_pages_changed: list[Callable[[list[tuple[str, str]]], None]] = []
        self.rules = IgnoreRules.load(self.vault)
        self.sync = None
        self.last_sync: str | None = _meta(db, "last_sync")   # when a batch last committed
        self.last_report: dict | None = None
        self.stats = {"parsed": 0, "touched": 0, "deleted": 0, "renamed": 0, "commits": 0, "errors": 0}
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
            if IGNORE_FILE in paths or full:
                self.rules = IgnoreRules.load(self.vault)
                if IGNORE_FILE in paths:
                    full = True
            try:
                present, gone, rows, problems = disk_state(self.vault, self.rules, self.writing, paths, dirs, moves,
                                                            full, sweep=not self.read_only)
                report = self._apply(present, gone, rows, moves, problems, full, dirs, progress)
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

    def _apply(self, present, gone, rows, moves, problems, full, dirs, progress) -> dict:
        t = self.writing
        gone_rows = {rel: rows[rel] for rel in gone if rel in rows}
        reads: dict[str, tuple] = {}
        pairs = pair_renames(self.vault, present, gone_rows, rows, moves, reads)
        report = {"pages": len(present), "parsed": 0, "unchanged": 0, "deleted": 0, "renamed": len(pairs), "skipped": 0}
        self._begin()
        scan_problems, file_problems = problems
        for d, probs in scan_problems:
            t.replace_scan_problems(probs, d)
        walked = scan_kinds_paths(scan_problems)
        for rel, problem in file_problems:
            if rel in walked:
                continue
            t.clear_problems(rel)
            if problem is not None:
                t.add_problem(problem)
        for rel, row in gone_rows.items():
            self._delete_row(row)
            if not full:
                self._note_gone(row)
            report["deleted"] += 1
        # a renamed page frees its old slug too; files waiting on a freed slug go last,
        # after the page that held it has moved on
        freed = self._colliders_freed(list(gone_rows.values()) + list(pairs.values()), present)
        work = sorted(p for p in present if p not in freed) + sorted(freed)
        total = len(work)
        done_in_batch = 0
        for i, rel in enumerate(work):
            try:
                outcome = self._index_file(rel, present[rel], pairs.get(rel) or rows.get(rel), reads.pop(rel, None),
                                           trust_stat=full)
            except Exception as e:  # one bad file never stops the batch
                log.exception("indexing %s failed", rel)
                self.stats["errors"] += 1
                t.clear_problems(rel)
                t.add_problem(Problem(rel, "index_error", f"could not be indexed: {type(e).__name__}: {e}"))
                outcome = "skipped"
            report[outcome] = report.get(outcome, 0) + 1
            if outcome != "unchanged":
                done_in_batch += 1
            if done_in_batch >= (FULL_BATCH_PAGES if full else BATCH_PAGES):
                # a big run resolves links once at the end: each batch would
                # otherwise re-resolve every earlier link to its new pages
                self._finish(resolve=False)
                self._begin(keep_links=True)
                done_in_batch = 0
            if progress is not None and (i % 50 == 0 or i + 1 == total):
                progress(i + 1, total)
        self._note_moves(pairs)
        self._finish()
        if progress is not None and total == 0:
            progress(0, 0)
        return report

    def _index_file(self, rel: str, st: FileStat, row, read, trust_stat: bool = True) -> str:
        t = self.writing
        renamed = row is not None and row["path"] != rel
        # a whole-vault pass trusts mtime+size; a path an event named is read, since a
        # same-size save within one clock tick (or with a preserved mtime) keeps both
        if (trust_stat and row is not None and not renamed and row["mtime_ns"] == st.mtime_ns
                and row["size"] == st.size):
            return "unchanged"
        raw, text, problem = read if read is not None else read_page(self.vault, rel, st.size)
        t.clear_problems(rel)
        if problem is not None:
            t.add_problem(problem)
        stub = problem is not None and problem.kind == "too_large"
        if stub:  # its name and frontmatter only, from the first bytes (architecture.md "Hostile content")
            head = read_head(self.vault, rel, STUB_HEAD_BYTES)
            raw = None if head is None else head + f"\n{st.size}".encode()   # the hash covers the size too
            text = None if head is None or b"\x00" in head[:8192] else head.decode("utf-8", "replace")
        if text is None or raw is None:  # gone since the stat, or binary
            if row is not None:
                self._delete_row(row)
            return "skipped"
        h = content_hash(raw)
        if row is not None and not renamed and row["content_hash"] == h:
            t.touch(row["id"], FileStat(rel, st.mtime_ns, st.size))
            self.stats["touched"] += 1
            return "unchanged"
        page = parse_stub(rel, text) if stub else parse_page(rel, text)
        owner = t.by_slug(page.slug)
        if owner is not None and (row is None or owner["id"] != row["id"]):
            t.add_problem(Problem(rel, "slug_collision", f"has the same slug {page.slug!r} as {owner['path']}, which is "
                                                         "indexed; this file is not — rename one of them"))
            t.add_problem(Problem(owner["path"], "slug_collision", collision_echo(rel)))
            if renamed:
                self._delete_row(row)
            return "skipped"
        if page.frontmatter_error:
            # docs/architecture.md "Private pages": what cannot be read is private
            t.add_problem(Problem(rel, "bad_frontmatter", f"{page.frontmatter_error}; the page is indexed without "
                                                          "its frontmatter, and is private, until it is fixed"))
        elif page.visibility_doubt:
            t.add_problem(Problem(rel, "unclear_visibility", page.visibility_doubt))
        if row is None and not trust_stat:   # a whole-vault pass pairs its moves itself (pair_renames)
            self._came_back(page.slug, h, page.frontmatter.get("id"))
        before = self._names_of(row["id"]) if row is not None and not renamed else None
        pid, added, removed, all_rows = t.upsert(page, st, h, row)
        if before is None or before != self._names_of(pid):
            self._names_changed = True
        if row is None or row["slug"] != page.slug:
            self._tails.add(page.tail)
            if row is not None:
                self._tails.add(row["tail"])
        if renamed:
            self.stats["renamed"] += 1
        self._from_ids.add(pid)
        if row is not None:
            self.writing_keyword.delete_page(pid)
        self.writing_keyword.add_page(pid, slug=page.slug, title=page.title, aliases=page.aliases, tags=page.tags,
                              ptype=page.type, visibility=page.visibility,
                              chunks=[(r["id"], r["heading"], r["heading_path"], r["text"]) for r in all_rows])
        self._added.extend(added)
        self._removed.extend(removed)
        self.stats["parsed"] += 1
        return "parsed"

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

    def _delete_row(self, row) -> None:
        self._names_changed = True
        self._removed.extend(self.writing.delete(row["id"]))
        self.writing.clear_problems(row["path"])
        self.writing_keyword.delete_page(row["id"])
        self._tails.add(row["tail"])
        self.stats["deleted"] += 1

    def _colliders_freed(self, deleted_rows, present) -> set[str]:
        """A file skipped for sharing a deleted (or renamed) page's slug can now be indexed."""
        slugs = {r["slug"] for r in deleted_rows}
        freed: set[str] = set()
        if not slugs:
            return freed
        for (path,) in self.writing.db.execute("SELECT DISTINCT path FROM problems WHERE kind = 'slug_collision'").fetchall():
            if path_to_slug(path) in slugs:
                st = present.get(path) or stat_page(self.vault, path)
                if st is not None and classify(path, self.rules) == "page":
                    present[path] = st
                    freed.add(path)
        return freed

    def _begin(self, keep_links: bool = False) -> None:
        if not keep_links:
            self._tails: set[str] = set()
            self._from_ids: set[int] = set()
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

    def start_watching(self, **kw):
        """Follow saves live (watchdog; polling when inotify is exhausted)."""
        if self.read_only or self.sync is not None:
            return self.sync
        from ..vault.sync import VaultSync

        self.sync = VaultSync(self, **kw)
        self.sync.start()
        return self.sync

    @property
    def pending_events(self) -> int:
        return self.sync.pending_count() if self.sync else 0

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
        if self.sync is not None:
            self.sync.stop()
            self.sync = None
        with self._lock:
            if self.keyword is not None:
                self.keyword.close()
            if self.wdb is not None:
                self.wdb.close()
                self.wdb = None


def _meta(db, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None
