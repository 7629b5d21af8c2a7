"""The one vault indexer of a PostgreSQL deployment: the vault's pages kept in the page tables.

The PostgreSQL side of indexer/vault/indexing_pass.py, the pass the
embedded index (indexer/pages/vault_index.py) runs too: what changed on
disk, which file moved, which is unchanged, too large, colliding or private
(docs/architecture.md, "Private pages") is decided there; this class says
how the page tables begin, store, delete and commit. Every change goes
through `apply`, which re-reads the disk state of the paths it is given
(events say where to look, never what happened): `reconcile` is a
whole-vault pass (start-up, a cold load), `start_watching` follows watchdog
events through indexer/vault/sync.py.

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
from typing import Any, Callable, Iterable, cast

import psycopg

from ...indexer.vault.indexing_pass import IndexingPass, PageTableWrites, Progress, Report
from ...indexer.vault.parse import ParsedPage
from ...indexer.vault.scan import FileStat
from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.vault_changes import PageRow, Read, disk_state
from . import schema
from .pages_write import PgPageTables, Row

log = logging.getLogger("brain.indexer.postgres")

INDEX_LOCK = 0x627261696E + 20   # one writer of the page tables at a time, across processes
Listener = Callable[[list[dict[str, Any]], list[int]], None]


class PgVaultIndexer(IndexingPass):
    def __init__(self, vault: Path, dsn: str, *, migrate: bool = True):
        super().__init__(vault)
        self.dsn = dsn
        self.conn = psycopg.connect(dsn)
        if migrate:
            schema.migrate(self.conn)
        self.tables = PgPageTables(self.conn)
        self.on_chunks_changed: list[Listener] = []
        self.last_report: Report | None = None
        self._careful = False
        # a whole-vault pass knows every page: the slug owners are looked up there, not asked per file
        self._owners: dict[str, PageRow] | None = None
        self._lock = threading.RLock()

    # -- the one way in -------------------------------------------------------------

    def reconcile(self, progress: Progress | None = None) -> Report:
        """Bring the tables in line with the whole vault."""
        return self.apply(full=True, progress=progress)

    def rename(self, old_rel: str, new_rel: str) -> Report:
        return self.apply([old_rel, new_rel], moves=[(old_rel, new_rel)])

    def apply(self, paths: Iterable[str] = (), dirs: Iterable[str] = (), moves: Iterable[tuple[str, str]] = (),
              *, full: bool = False, progress: Progress | None = None) -> Report:
        """Re-read the given paths (and folders, and both ends of moves) from disk and index what changed."""
        with self._lock:
            path_set, dir_set, move_list = set(paths), set(dirs), list(moves)
            full = self._reload_rules(path_set, full)
            try:
                report = self._pass(path_set, dir_set, move_list, full, progress, careful=False)
            except psycopg.Error as e:
                lost = self.conn.broken or self.conn.closed   # the server went away: try again later
                self._recover()   # no half batch: the next apply starts clean
                if lost:
                    raise
                # the database refused something one page holds: again, each page on its own
                log.warning("a batch failed (%s); applying it again a page at a time", e)
                try:
                    report = self._pass(path_set, dir_set, move_list, full, progress, careful=True)
                except BaseException:
                    self._recover()
                    raise
            except BaseException:
                self._recover()
                raise
            self.last_report = report
            return report

    def _pass(self, paths: set[str], dirs: set[str], moves: list[tuple[str, str]], full: bool,
              progress: Progress | None, careful: bool) -> Report:
        self._careful = careful
        self._begin()   # the lock first: the rows read next stay what this batch sees
        state = disk_state(self.vault, self.rules, self.tables, paths, dirs, moves, full)
        self._owners = {r["slug"]: r for r in state[2].values()} if full else None
        gone_rows = self._gone_rows(state)
        reads: dict[str, Read] = {}
        pairs = self._pair(state, gone_rows, moves, reads)
        report = self._index_changes(state, gone_rows, pairs, reads, full, progress)
        self._finish()
        return report

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

    # -- the pass's hooks (indexing_pass.py) --------------------------------------------

    def _writes(self) -> PageTableWrites:
        return self.tables

    def _open_batch(self) -> None:
        self.tables.reset()
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))

    def _failure(self, rel: str, e: Exception) -> str:
        if isinstance(e, psycopg.Error):
            if self.conn.broken or not self._careful:
                raise e   # the server went away, or the batch is tried again page by page
            return f"the database refused it: {type(e).__name__}: {e}"
        return super()._failure(rel, e)

    def _slug_owner(self, slug: str) -> PageRow | None:
        return self._owners.get(slug) if self._owners is not None else self.tables.by_slug(slug)

    def _parse(self, rel: str, text: str, stub: bool) -> ParsedPage:
        # PostgreSQL text cannot hold NUL, which a file may have past the part scanned for binary
        # (scan.read_page): shown as U+FFFD, as the embedded index shows bytes it cannot decode
        return super()._parse(rel, text.replace("\x00", "\ufffd"), stub)

    def _store(self, rel: str, st: FileStat, page: ParsedPage, h: str, row: PageRow | None,
               trust_stat: bool) -> int:
        # every row the pass holds came from these tables, or from _owners, built from their rows
        pid = self.tables.upsert(page, st, h, cast("Row | None", row), careful=self._careful)
        if self._owners is not None:
            if row is not None:
                self._forget_owner(row)
            self._owners[page.slug] = {"id": pid, "path": rel, "slug": page.slug, "tail": page.tail}
        return pid

    def _deleted(self, row: PageRow, chunk_ids: list[int]) -> None:
        self._forget_owner(row)

    def _forget_owner(self, row: PageRow) -> None:
        owners = self._owners
        owner = owners.get(row["slug"]) if owners is not None else None
        if owners is not None and owner is not None and owner["id"] == row["id"]:
            del owners[row["slug"]]

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

    # -- state ------------------------------------------------------------------------

    def problems(self) -> list[dict[str, str]]:
        with self._lock:
            rows = self.conn.execute("SELECT path, kind, detail FROM problems ORDER BY kind, path").fetchall()
            self.conn.commit()
        return [{"path": r[0], "kind": r[1], "detail": r[2]} for r in rows]

    def close(self) -> None:
        self._stop_watching()
        with self._lock:
            self.conn.close()
