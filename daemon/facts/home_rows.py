"""The facts table's side of entity identity: each fact's home page kept current, and moves logged.

A mixin of SqliteFactsStore (store.py), which brings `db`, `lock`, `_write` and
`catch_up`. The projection files every fact under the page its filed name
means now (facts/homes.py says how); this keeps that true when the logs gain a
fact or a move, and when the vault's pages change (the daemon calls
`refresh_homes` after each index commit). docs/architecture.md, "Entity identity".
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from .homes import resolve_homes

if TYPE_CHECKING:
    import sqlite3
    import threading

    from ..stores.pages import PagesStore

log = logging.getLogger("brain.facts")

# the reasons a move record gives, read by `brain doctor` and people
MOVED_BY_INDEX = "the page's file moved"


class HomeRows:
    db: "sqlite3.Connection"
    lock: "threading.RLock"
    _homes_due: set[str] | None
    _moves_cache: dict[str, str] | None
    _homes_lock: "threading.Lock"
    homes_pages: "PagesStore | None"

    if TYPE_CHECKING:
        def _write(self, build) -> list[dict]: ...

    def attach_pages(self, pages: "PagesStore") -> None:
        """Resolve filed names against these pages from now on, and once now."""
        self.homes_pages = pages
        self.refresh_homes(None)

    def _home_now(self, filed: str | None) -> str | None:
        """The home a newly read fact takes until its name is resolved: that of its name's other facts."""
        if filed is None:
            return None
        row = self.db.execute("SELECT entity_slug FROM facts WHERE filed_as = ? LIMIT 1", (filed,)).fetchone()
        return str(row[0]) if row else filed

    def moves(self) -> dict[str, str]:
        """Each slug's latest move, from → to, in the one order every device reads the logs in
        (kept in memory until the projection reads a move or starts again: `_moves_cache = None`)."""
        with self.lock:
            cached = self._moves_cache
            if cached is not None:
                return cached
            out: dict[str, str] = {}
            for src, dst in self.db.execute("SELECT src, dst FROM entity_moves ORDER BY ts, log, line_no"):
                out[src] = dst
            self._moves_cache = out
            return out

    def refresh_homes(self, names: list[str] | None) -> int:
        """Resolve these filed names (None: all) again; how many facts changed home."""
        pages = getattr(self, "homes_pages", None)
        if pages is None:
            return 0
        with self._homes_lock:   # one refresh at a time, so an older answer never lands after a newer one
            return self._refresh_homes(pages, names)

    def _refresh_homes(self, pages: "PagesStore", names: list[str] | None) -> int:
        with self.lock:
            # each filed name with the home its facts have now (they all have the same one)
            now = dict(self.db.execute("SELECT filed_as, MIN(entity_slug) FROM facts WHERE filed_as IS NOT NULL "
                                       "GROUP BY filed_as"))
            moves = self.moves()
        names = list(now) if names is None else names
        if not names:
            return 0
        # the pages are read without the facts lock: a remember waits only for the updates below
        homes = resolve_homes(names, pages, moves)
        with self.lock:
            changed = 0
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for name, home in homes.items():
                    if now.get(name) == home:
                        continue
                    changed += self.db.execute("UPDATE facts SET entity_slug = ? WHERE filed_as = ? AND entity_slug IS NOT ?",
                                               (home, name, home)).rowcount
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        if changed:
            log.info("%d facts now filed under the page their entity moved to or took", changed)
        return changed

    def settle_homes(self) -> None:
        """After the logs were read: resolve the names that came with new facts or moves."""
        due, self._homes_due = self._homes_due, set()
        if due is None or due:
            self.refresh_homes(None if due is None else sorted(due))

    def home_of(self, name: str) -> str | None:
        """The slug facts filed under `name` belong to now, when that is another slug; else None."""
        pages = getattr(self, "homes_pages", None)
        if pages is None:
            return None
        with self.lock:
            row = self.db.execute("SELECT entity_slug FROM facts WHERE filed_as = ? LIMIT 1", (name,)).fetchone()
            if row is not None:
                home = str(row[0])
            elif name in self.moves() or "/" in name:
                # a moved page's old slug, or a slug whose words name a page (`people/me` → the page aliased me)
                home = resolve_homes([name], pages, self.moves())[name]
            else:
                return None   # a plain name the caller's own resolution already read as a page's name
        return home if home != name else None

    def record_moves(self, moves: list[tuple[str, str]], why: str = MOVED_BY_INDEX) -> int:
        """Append a move record per (from slug, to slug) to this device's log; how many."""
        moves = [(a, b) for a, b in moves if a and b and a != b]
        if not moves:
            return 0
        ts = now_iso()
        with self.lock:
            self._write(lambda: [{"op": "move", "from": a, "to": b, "ts": ts, "reason": why} for a, b in moves])
        self.settle_homes()
        return len(moves)

    def count_filed(self, name: str, viewer: Viewer) -> int:
        """Active facts the viewer may see whose filed name, or whose home, is `name`."""
        world = "" if viewer.sees_private else " AND visibility = 'world'"
        with self.lock:
            return int(self.db.execute("SELECT COUNT(*) FROM facts WHERE (filed_as = ? OR entity_slug = ?) "
                                       f"AND expired_at IS NULL{world}", (name, name)).fetchone()[0])

    def filed_without_page(self, viewer: Viewer) -> list[tuple[str, int]]:
        """(entity slug, active facts the viewer may see) for each entity whose facts belong to no
        page: entities with facts and no page yet, or pages gone or moved where brain could not follow."""
        pages = getattr(self, "homes_pages", None)
        if pages is None:
            return []
        with self.lock:
            counts = active_by_entity(self.db, viewer)
        return without_page(counts, lambda names: pages.paths(names, Viewer.owner()))


def active_by_entity(db: "sqlite3.Connection", viewer: Viewer) -> list[tuple[str, int]]:
    """(entity slug, active facts the viewer may see) for every entity facts belong to, by slug."""
    world = "" if viewer.sees_private else " AND visibility = 'world'"
    rows = db.execute(f"SELECT entity_slug, COUNT(*) FROM facts WHERE entity_slug IS NOT NULL AND expired_at IS NULL"
                      f"{world} GROUP BY entity_slug ORDER BY entity_slug").fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def without_page(counts: list[tuple[str, int]], paths) -> list[tuple[str, int]]:
    """The (slug, count) pairs no page has; `paths(slugs)` maps the slugs pages have to their files."""
    known: set[str] = set()
    for i in range(0, len(counts), 500):
        known.update(paths([name for name, _ in counts[i:i + 500]]))
    return [(name, n) for name, n in counts if name not in known]


def unfiled_in_cache(cache_file: Path, paths) -> list[tuple[str, int]] | None:
    """`filed_without_page` for the owner, read from the facts cache opened read only (brain doctor,
    without the daemon); None with no cache, or one that cannot be read."""
    import sqlite3

    if not cache_file.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{cache_file}?mode=ro", uri=True, timeout=5)
        try:
            counts = active_by_entity(db, Viewer.owner())
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return without_page(counts, paths)
