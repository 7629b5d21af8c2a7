"""The pass both vault indexers run: what changed on disk, becoming page rows.

The embedded index (indexer/pages/vault_index.py) and the PostgreSQL one
(daemon/postgres/indexer.py) keep different tables but decide alike: which
files are pages, which moved (vault_changes.pair_renames), which are
unchanged (same mtime and size on a whole-vault pass, else the same bytes),
which are too large to parse whole (docs/architecture.md "Hostile content"),
which lose a slug to another file, and which problems each leaves. That
deciding is written here once; a backend subclass says how its tables
begin, store, delete and commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .frontmatter import MAX_FRONTMATTER_BYTES
from .parse import ParsedPage, parse_page, parse_stub
from .problem_rows import collision_echo
from .scan import IGNORE_FILE, FileStat, IgnoreRules, Problem, classify, read_head, read_page, stat_page
from .slugs import path_to_slug
from .vault_changes import DiskState, PageRow, PageRows, Read, pair_renames, scan_kinds_paths
from .vault_files import content_hash

if TYPE_CHECKING:
    from .sync import VaultSync

log = logging.getLogger("brain.indexer")

BATCH_PAGES = 500          # pages per commit: a `git checkout` of 1,000 files is 2 commits
FULL_BATCH_PAGES = 2000    # a whole-vault pass commits less often (each commit costs a sync to disk)
STUB_HEAD_BYTES = MAX_FRONTMATTER_BYTES + 8192   # room for the largest frontmatter block read

Progress = Callable[[int, int], None]
Report = dict[str, int]


class PageTableWrites(PageRows, Protocol):
    """What the pass asks of a backend's page tables beyond reading them."""

    def by_slug(self, slug: str) -> PageRow | None: ...

    def collision_paths(self) -> list[str]:
        """Paths left out for sharing a slug (their `slug_collision` problems)."""
        ...

    def touch(self, page_id: int, st: FileStat) -> None: ...

    def delete(self, page_id: int) -> list[int]:
        """Remove a page; the ids of its chunks."""
        ...

    def clear_problems(self, path: str) -> None: ...

    def add_problem(self, p: Problem) -> None: ...

    def replace_scan_problems(self, problems: list[Problem], under: str = "") -> None: ...


class IndexingPass:
    """The shared pass; subclasses provide `_writes`, `_open_batch`, `_finish`, `_store` and may refine
    the other hooks. `self.rules` is the vault's ignore rules, reloaded when `.brainignore` changes."""

    read_only = False   # an index another process writes: never watched, never applied

    def __init__(self, vault: Path):
        self.vault = Path(vault)
        self.rules = IgnoreRules.load(self.vault)
        self.sync: VaultSync | None = None
        self.stats: dict[str, int] = {"parsed": 0, "touched": 0, "deleted": 0, "renamed": 0, "commits": 0,
                                      "errors": 0}
        self._tails: set[str] = set()      # link tails whose resolution may have changed in this pass
        self._from_ids: set[int] = set()   # pages whose own links were rewritten in this pass

    def apply(self, paths: Iterable[str] = (), dirs: Iterable[str] = (), moves: Iterable[tuple[str, str]] = (),
              *, full: bool = False, progress: Progress | None = None) -> Report:
        """Re-read the given paths (and folders, and both ends of moves) from disk and index what changed."""
        raise NotImplementedError

    # -- watching ------------------------------------------------------------------------

    def start_watching(self, **kw: Any) -> VaultSync | None:
        """Follow saves live (watchdog; polling when inotify is exhausted): each burst of events
        becomes one `apply` of the paths they name (sync.py)."""
        if self.read_only or self.sync is not None:
            return self.sync
        from .sync import VaultSync   # watchdog loads only for an index that watches

        self.sync = VaultSync(self, **kw)
        self.sync.start()
        return self.sync

    @property
    def pending_events(self) -> int:
        return self.sync.pending_count() if self.sync else 0

    def _stop_watching(self) -> None:
        if self.sync is not None:
            self.sync.stop()
            self.sync = None

    # -- what a backend provides ---------------------------------------------------

    def _writes(self) -> PageTableWrites:
        raise NotImplementedError

    def _open_batch(self) -> None:
        """Start a batch (a transaction) on the tables."""
        raise NotImplementedError

    def _finish(self, resolve: bool = True) -> None:
        """Write what the batch queued, resolve links (`resolve`: a big pass does it once, at its
        end), commit, and tell the listeners which chunks came and went."""
        raise NotImplementedError

    def _store(self, rel: str, st: FileStat, page: ParsedPage, h: str, row: PageRow | None,
               trust_stat: bool) -> int:
        """Write one parsed page (and whatever else the backend keeps of it); its page id."""
        raise NotImplementedError

    def _deleted(self, row: PageRow, chunk_ids: list[int]) -> None:
        """A page was removed from the tables (`chunk_ids`: its chunks)."""

    def _drop_gone(self, row: PageRow, full: bool) -> None:
        """A page whose file is gone."""
        self._delete_row(row)

    def _slug_owner(self, slug: str) -> PageRow | None:
        return self._writes().by_slug(slug)

    def _parse(self, rel: str, text: str, stub: bool) -> ParsedPage:
        return parse_stub(rel, text) if stub else parse_page(rel, text)

    def _failure(self, rel: str, e: Exception) -> str:
        """The problem line for a file that could not be indexed; raises to stop the batch instead."""
        return f"could not be indexed: {type(e).__name__}: {e}"

    # -- the pass ---------------------------------------------------------------------

    def _begin(self, keep_links: bool = False) -> None:
        if not keep_links:   # a big pass resolves every batch's links once, at its end
            self._tails = set()
            self._from_ids = set()
        self._open_batch()

    def _reload_rules(self, paths: set[str], full: bool) -> bool:
        """Reload the ignore rules on a whole-vault pass or a change to them (which makes it one)."""
        if IGNORE_FILE in paths or full:
            self.rules = IgnoreRules.load(self.vault)
        return full or IGNORE_FILE in paths

    @staticmethod
    def _gone_rows(state: DiskState) -> dict[str, PageRow]:
        _, gone, rows, _ = state
        return {rel: rows[rel] for rel in gone if rel in rows}

    def _index_changes(self, state: DiskState, gone_rows: dict[str, PageRow], pairs: dict[str, PageRow],
                       reads: dict[str, Read], full: bool, progress: Progress | None) -> Report:
        """Record the problems, delete the gone pages, index every present file (committing every
        batch); the caller has begun the first batch and finishes the last."""
        present, _, rows, problems = state
        t = self._writes()
        report = {"pages": len(present), "parsed": 0, "unchanged": 0, "deleted": 0, "renamed": len(pairs),
                  "skipped": 0}
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
        for row in gone_rows.values():
            self._drop_gone(row, full)
            report["deleted"] += 1
        # a renamed page frees its old slug too; files waiting on a freed slug go last,
        # after the page that held it has moved on
        freed = self._colliders_freed(list(gone_rows.values()) + list(pairs.values()), present)
        work = sorted(p for p in present if p not in freed) + sorted(freed)
        done_in_batch = 0
        for i, rel in enumerate(work):
            try:
                outcome = self._index_file(rel, present[rel], pairs.get(rel) or rows.get(rel), reads.pop(rel, None),
                                           trust_stat=full)
            except Exception as e:  # one bad file never stops the batch
                detail = self._failure(rel, e)
                log.exception("indexing %s failed", rel)
                self.stats["errors"] += 1
                t.clear_problems(rel)
                t.add_problem(Problem(rel, "index_error", detail))
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
            if progress is not None and (i % 50 == 0 or i + 1 == len(work)):
                progress(i + 1, len(work))
        if progress is not None and not work:   # nothing to index: a progress bar still sees its end
            progress(0, 0)
        return report

    def _pair(self, state: DiskState, gone_rows: dict[str, PageRow], moves: list[tuple[str, str]],
              reads: dict[str, Read]) -> dict[str, PageRow]:
        present, _, rows, _ = state
        return pair_renames(self.vault, present, gone_rows, rows, moves, reads)

    def _index_file(self, rel: str, st: FileStat, row: PageRow | None, read: Read | None,
                    trust_stat: bool = True) -> str:
        t = self._writes()
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
            t.touch(row["id"], st)
            self.stats["touched"] += 1
            return "unchanged"
        page = self._parse(rel, text, stub)
        owner = self._slug_owner(page.slug)
        if owner is not None and (row is None or owner["id"] != row["id"]):
            t.add_problem(Problem(rel, "slug_collision", f"has the same slug {page.slug!r} as {owner['path']}, "
                                                         "which is indexed; this file is not — rename one of them"))
            t.add_problem(Problem(owner["path"], "slug_collision", collision_echo(rel)))
            if renamed and row is not None:
                self._delete_row(row)
            return "skipped"
        if page.frontmatter_error:
            # docs/architecture.md "Private pages": what cannot be read is private
            t.add_problem(Problem(rel, "bad_frontmatter", f"{page.frontmatter_error}; the page is indexed without "
                                                          "its frontmatter, and is private, until it is fixed"))
        elif page.visibility_doubt:
            t.add_problem(Problem(rel, "unclear_visibility", page.visibility_doubt))
        pid = self._store(rel, st, page, h, row, trust_stat)
        if row is None or row["slug"] != page.slug:
            self._tails.add(page.tail)
            if row is not None:
                self._tails.add(row["tail"])
        if renamed:
            self.stats["renamed"] += 1
        self._from_ids.add(pid)
        self.stats["parsed"] += 1
        return "parsed"

    def _delete_row(self, row: PageRow) -> None:
        t = self._writes()
        chunk_ids = t.delete(row["id"])
        t.clear_problems(row["path"])
        self._tails.add(row["tail"])
        self.stats["deleted"] += 1
        self._deleted(row, chunk_ids)

    def _colliders_freed(self, deleted_rows: Iterable[PageRow], present: dict[str, FileStat]) -> set[str]:
        """A file skipped for sharing a deleted (or renamed) page's slug can now be indexed."""
        slugs = {r["slug"] for r in deleted_rows}
        freed: set[str] = set()
        if not slugs:
            return freed
        for path in self._writes().collision_paths():
            if path_to_slug(path) in slugs:
                st = present.get(path) or stat_page(self.vault, path)
                if st is not None and classify(path, self.rules) == "page":
                    present[path] = st
                    freed.add(path)
        return freed
