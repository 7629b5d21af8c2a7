"""The one vault indexer of a PostgreSQL deployment: the vault's pages kept in the page tables.

The PostgreSQL twin of indexer/pages/vault_index.py, built from the same
parts: the vault walk, ignore rules, reads and parsing of indexer/vault, the
pairing of moved files (vault_changes.pair_renames), the rule that a page
whose frontmatter cannot be parsed is private (docs/architecture.md,
"Private pages"). Every change goes through `apply`, which re-reads the
disk state of the paths it is given (events say where to look, never what
happened): `reconcile` is a whole-vault pass (start-up, a cold load),
`start_watching` follows watchdog events through indexer/vault/sync.py.

Each batch is one transaction holding an advisory lock, so two writers (this
process and a front end's put_page, pages_files.py) never interleave their
writes; after each commit the `on_chunks_changed` listeners hear which chunks
came and went (the chunk vectors, chunk_vectors.py).

`brain index --watch --store URL` is meant to run exactly this:
`PgVaultIndexer(vault, url).reconcile()` then `.start_watching()`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

import psycopg

from ...indexer.page_policy.problems import collision_echo
from ...indexer.vault.frontmatter import MAX_FRONTMATTER_BYTES
from ...indexer.vault.parse import parse_page, parse_stub
from ...indexer.vault.scan import IGNORE_FILE, FileStat, IgnoreRules, Problem, classify, read_head, read_page, stat_page
from ...indexer.vault.slugs import path_to_slug
from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.vault_changes import pair_renames, scan_kinds_paths
from ...indexer.vault.vault_files import content_hash
from . import schema
from .indexer_disk import disk_state
from .pages_write import PgPageTables, Row

log = logging.getLogger("brain.indexer.postgres")

INDEX_LOCK = 0x627261696E + 20   # one writer of the page tables at a time, across processes
BATCH_PAGES = 500                # pages per commit for events; a whole-vault pass commits less often
FULL_BATCH_PAGES = 2000
STUB_HEAD_BYTES = MAX_FRONTMATTER_BYTES + 8192
Listener = Callable[[list[dict], list[int]], None]


class PgVaultIndexer:
    def __init__(self, vault: Path, dsn: str, *, migrate: bool = True):
        self.vault = Path(vault)
        self.dsn = dsn
        self.conn = psycopg.connect(dsn)
        if migrate:
            schema.migrate(self.conn)
        self.tables = PgPageTables(self.conn)
        self.rules = IgnoreRules.load(self.vault)
        self.on_chunks_changed: list[Listener] = []
        self.sync: Any = None
        self.last_report: dict | None = None
        self.stats = {"parsed": 0, "touched": 0, "deleted": 0, "renamed": 0, "commits": 0, "errors": 0}
        self._lock = threading.RLock()

    # -- the one way in -------------------------------------------------------------

    def reconcile(self, progress: Callable[[int, int], None] | None = None) -> dict:
        """Bring the tables in line with the whole vault."""
        return self.apply(full=True, progress=progress)

    def rename(self, old_rel: str, new_rel: str) -> dict:
        return self.apply([old_rel, new_rel], moves=[(old_rel, new_rel)])

    def apply(self, paths: Iterable[str] = (), dirs: Iterable[str] = (), moves: Iterable[tuple[str, str]] = (),
              *, full: bool = False, progress: Callable[[int, int], None] | None = None) -> dict:
        """Re-read the given paths (and folders, and both ends of moves) from disk and index what changed."""
        with self._lock:
            paths, dirs, moves = set(paths), set(dirs), list(moves)
            if IGNORE_FILE in paths or full:
                self.rules = IgnoreRules.load(self.vault)
                full = full or IGNORE_FILE in paths
            try:
                report = self._pass(paths, dirs, moves, full, progress, careful=False)
            except psycopg.Error as e:
                lost = self.conn.broken or self.conn.closed   # the server went away: try again later
                self._recover()   # no half batch: the next apply starts clean
                if lost:
                    raise
                # the database refused something one page holds: again, each page on its own
                log.warning("a batch failed (%s); applying it again a page at a time", e)
                try:
                    report = self._pass(paths, dirs, moves, full, progress, careful=True)
                except BaseException:
                    self._recover()
                    raise
            except BaseException:
                self._recover()
                raise
            self.last_report = report
            return report

    def _pass(self, paths: set[str], dirs: set[str], moves: list[tuple[str, str]], full: bool,
              progress: Callable[[int, int], None] | None, careful: bool) -> dict:
        self._careful = careful
        self._begin()
        state = disk_state(self.vault, self.rules, self.tables, paths, dirs, moves, full)
        return self._apply(*state, moves, full, progress)

    def _recover(self) -> None:
        """Roll the open batch back; a connection the server dropped (a restart, a failover) is
        replaced, so the watcher's retry of the same paths finds a working one."""
        self.tables.reset()
        if self.conn.broken or self.conn.closed:
            try:
                self.conn.close()
                self.conn = psycopg.connect(self.dsn)
            except psycopg.OperationalError:
                log.warning("the database is unreachable; the next apply tries again")
            self.tables = PgPageTables(self.conn)
        else:
            self.conn.rollback()

    def _begin(self, keep_links: bool = False) -> None:
        self.tables.reset()
        if not keep_links:   # a big pass resolves every batch's links once, at its end
            self._tails: set[str] = set()
            self._from_ids: set[int] = set()
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))

    def _apply(self, present, gone, rows, problems, moves, full, progress) -> dict:
        t = self.tables
        # a whole-vault pass knows every page: the slug owners are looked up here, not asked per file
        self._owners: dict[str, Row] | None = {r["slug"]: r for r in rows.values()} if full else None
        gone_rows = {rel: rows[rel] for rel in gone if rel in rows}
        reads: dict[str, tuple] = {}
        pairs = pair_renames(self.vault, present, gone_rows, rows, moves, reads)
        report = {"pages": len(present), "parsed": 0, "unchanged": 0, "deleted": 0, "renamed": len(pairs),
                  "skipped": 0}
        scan_problems, file_problems = problems
        for d, probs in scan_problems:
            t.replace_scan_problems(probs, d)
        walked = scan_kinds_paths(scan_problems)
        for rel, problem in file_problems:
            if rel not in walked:
                t.clear_problems(rel)
                if problem is not None:
                    t.add_problem(problem)
        for row in gone_rows.values():
            self._delete_row(row)
            report["deleted"] += 1
        freed = self._colliders_freed(list(gone_rows.values()) + list(pairs.values()), present)
        work = sorted(p for p in present if p not in freed) + sorted(freed)
        done = 0
        for i, rel in enumerate(work):
            try:
                outcome = self._index_file(rel, present[rel], pairs.get(rel) or rows.get(rel), reads.pop(rel, None),
                                           trust_stat=full)
            except psycopg.Error as e:
                if self.conn.broken or not self._careful:
                    raise   # the server went away, or the batch is tried again page by page
                log.exception("indexing %s failed", rel)
                self.stats["errors"] += 1
                t.clear_problems(rel)
                t.add_problem(Problem(rel, "index_error", f"the database refused it: {type(e).__name__}: {e}"))
                outcome = "skipped"
            except Exception as e:   # one bad file never stops the batch
                log.exception("indexing %s failed", rel)
                self.stats["errors"] += 1
                t.clear_problems(rel)
                t.add_problem(Problem(rel, "index_error", f"could not be indexed: {type(e).__name__}: {e}"))
                outcome = "skipped"
            report[outcome] = report.get(outcome, 0) + 1
            done += outcome != "unchanged"
            if done >= (FULL_BATCH_PAGES if full else BATCH_PAGES):
                self._finish(resolve=False)
                self._begin(keep_links=True)
                done = 0
            if progress is not None and (i % 50 == 0 or i + 1 == len(work)):
                progress(i + 1, len(work))
        self._finish()
        return report

    def _index_file(self, rel: str, st: FileStat, row: Row | None, read, trust_stat: bool) -> str:
        t = self.tables
        renamed = row is not None and row["path"] != rel
        # a whole-vault pass trusts mtime and size; a path an event named is read
        if trust_stat and row is not None and not renamed and row["mtime_ns"] == st.mtime_ns \
                and row["size"] == st.size:
            return "unchanged"
        raw, text, problem = read if read is not None else read_page(self.vault, rel, st.size)
        t.clear_problems(rel)
        if problem is not None:
            t.add_problem(problem)
        stub = problem is not None and problem.kind == "too_large"
        if stub:   # its name and frontmatter only (docs/architecture.md "Hostile content")
            head = read_head(self.vault, rel, STUB_HEAD_BYTES)
            raw = None if head is None else head + f"\n{st.size}".encode()
            text = None if head is None or b"\x00" in head[:8192] else head.decode("utf-8", "replace")
        if text is None or raw is None:   # gone since the stat, or binary
            if row is not None:
                self._delete_row(row)
            return "skipped"
        h = content_hash(raw)
        if row is not None and not renamed and row["content_hash"] == h:
            t.touch(row["id"], st)
            self.stats["touched"] += 1
            return "unchanged"
        # PostgreSQL text cannot hold NUL, which a file may have past the part scanned for binary
        # (scan.read_page): shown as U+FFFD, as the embedded index shows bytes it cannot decode
        text = text.replace("\x00", "\ufffd")
        page = parse_stub(rel, text) if stub else parse_page(rel, text)
        owner = self._owners.get(page.slug) if self._owners is not None else t.by_slug(page.slug)
        if owner is not None and (row is None or owner["id"] != row["id"]):
            t.add_problem(Problem(rel, "slug_collision", f"has the same slug {page.slug!r} as {owner['path']}, "
                                                         "which is indexed; this file is not — rename one of them"))
            t.add_problem(Problem(owner["path"], "slug_collision", collision_echo(rel)))
            if renamed and row is not None:
                self._delete_row(row)
            return "skipped"
        if page.frontmatter_error:
            # what cannot be read is private (docs/architecture.md "Private pages")
            t.add_problem(Problem(rel, "bad_frontmatter", f"{page.frontmatter_error}; the page is indexed without "
                                                          "its frontmatter, and is private, until it is fixed"))
        elif page.visibility_doubt:
            t.add_problem(Problem(rel, "unclear_visibility", page.visibility_doubt))
        pid = t.upsert(page, st, h, row, careful=self._careful)
        if self._owners is not None:
            if row is not None and self._owners.get(row["slug"], {}).get("id") == row["id"]:
                del self._owners[row["slug"]]
            self._owners[page.slug] = {"id": pid, "path": rel, "slug": page.slug, "tail": page.tail}
        if row is None or row["slug"] != page.slug:
            self._tails.add(page.tail)
            if row is not None:
                self._tails.add(row["tail"])
        self.stats["renamed"] += renamed
        self._from_ids.add(pid)
        self.stats["parsed"] += 1
        return "parsed"

    def _delete_row(self, row: Row) -> None:
        if getattr(self, "_owners", None) and self._owners.get(row["slug"], {}).get("id") == row["id"]:
            del self._owners[row["slug"]]
        self.tables.delete(row["id"])
        self.tables.clear_problems(row["path"])
        self._tails.add(row["tail"])
        self.stats["deleted"] += 1

    def _colliders_freed(self, deleted_rows: list[Row], present: dict[str, FileStat]) -> set[str]:
        """A file skipped for sharing a deleted (or renamed) page's slug can now be indexed."""
        slugs = {r["slug"] for r in deleted_rows}
        freed: set[str] = set()
        if not slugs:
            return freed
        for path in self.tables.collision_paths():
            if path_to_slug(path) in slugs:
                st = present.get(path) or stat_page(self.vault, path)
                if st is not None and classify(path, self.rules) == "page":
                    present[path] = st
                    freed.add(path)
        return freed

    def _finish(self, resolve: bool = True) -> None:
        t = self.tables
        t.flush()
        if resolve:
            t.resolve_links(self._from_ids, self._tails)
        t.set_meta("last_sync", now_iso())
        self.conn.commit()
        self.stats["commits"] += 1
        added, removed = t.added, t.removed
        t.reset()
        if added or removed:
            for listener in list(self.on_chunks_changed):
                try:
                    listener(added, removed)
                except Exception:
                    log.warning("a chunks-changed listener failed", exc_info=True)

    # -- watching, state --------------------------------------------------------------

    def start_watching(self, **kw: Any) -> Any:
        """Follow saves live (watchdog, as the embedded index does; polling when inotify runs out)."""
        if self.sync is None:
            from ...indexer.vault.sync import VaultSync

            self.sync = VaultSync(self, **kw)
            self.sync.start()
        return self.sync

    @property
    def pending_events(self) -> int:
        return self.sync.pending_count() if self.sync else 0

    def problems(self) -> list[dict]:
        with self._lock:
            rows = self.conn.execute("SELECT path, kind, detail FROM problems ORDER BY kind, path").fetchall()
            self.conn.commit()
        return [{"path": r[0], "kind": r[1], "detail": r[2]} for r in rows]

    def close(self) -> None:
        if self.sync is not None:
            self.sync.stop()
            self.sync = None
        with self._lock:
            self.conn.close()
