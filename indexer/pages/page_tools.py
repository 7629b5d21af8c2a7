"""The page write over the index: put_page writes the file, then indexes it before returning.

A mixin of VaultIndex (it uses the index's reader connection, write lock,
ignore rules and `apply`); the checks and the atomic write are the vault's
(indexer/vault/page_writes.py). A writer who may not see private pages
(every remote caller) never writes over a `visibility: private` page.
Refusals are PageWriteError with the reason and the fix. The reads, the page
file included, are the pages store's (store.py, store_files.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..vault.page_writes import content_bytes, hold_aside, prepare_write, write_if_unchanged
from ..vault.scan import IgnoreRules
from ..vault.vault_files import PageWriteError, check_slug, content_hash
from ..vault.visibility import Viewer
from .table_writes import PageTables

WORLD = Viewer.world()   # a caller who does not say otherwise is the world (docs/protocol.md §4.8)


def owned_elsewhere() -> PageWriteError:
    """The refusal of a write through a read-only index: the writer is another process."""
    return PageWriteError("read_only", "another brain process owns this vault's index.",
                          "Send the request to the running daemon (drop --no-daemon).")


class IndexForWrites(Protocol):
    """What the page write uses of the VaultIndex it is a mixin of."""

    vault: Path
    db: sqlite3.Connection
    rules: IgnoreRules
    read_only: bool
    _lock: threading.RLock
    apply: Callable[..., dict[str, Any]]

    @property
    def writing(self) -> PageTables: ...


class PageOps:
    def put_page(self: IndexForWrites, slug: str, content: str, expected_hash: str | None = None, *,
                 viewer: Viewer = WORLD) -> dict[str, object]:
        """Write `<slug>.md` atomically and index it before returning; a writer who may not
        see private pages never writes over one (`_as_if_absent`)."""
        if self.read_only:
            raise owned_elsewhere()
        check_slug(slug)
        data = content_bytes(content)
        with self._lock:
            row = self.db.execute("SELECT path, visibility FROM pages WHERE slug = ?", (slug,)).fetchone()
            ready = prepare_write(self.vault, self.rules, slug, (row["path"], row["visibility"]) if row else None,
                                  data, expected_hash, viewer)
            if isinstance(ready, dict):   # held aside: a blind writer never writes over a private page
                return ready
            rel, real, old = ready
            held = write_if_unchanged(self.vault, slug, rel, data, old, viewer)
            if held is not None:   # another program changed the file meanwhile, into a page private to them
                return held
            # the link's target may be a page of its own
            target = Path(real).relative_to(Path(self.vault).resolve()).as_posix()
            self.apply(paths=list(dict.fromkeys([rel, target])))
            indexed = self.writing.by_path(rel)
            if indexed is None:
                why = self.db.execute("SELECT detail FROM problems WHERE path = ? LIMIT 1", (rel,)).fetchone()
                raise PageWriteError("not_indexed", f"{rel} was written but could not be indexed: "
                                                    f"{why[0] if why else 'unknown reason'}.",
                                     "Run `brain doctor` for details.")
        return {"slug": indexed["slug"], "path": rel, "hash": content_hash(data), "created": old is None}

    def _as_if_absent(self: IndexForWrites, slug: str, rel: str, data: bytes,
                      expected_hash: str | None) -> dict[str, object]:
        """A remote put_page onto a private page: the answer an absent slug gets.

        Remote callers learn nothing about private pages, not even that one
        exists (docs/protocol.md §4.8), so the private page stays as it is and
        the answer is the one a new page would get. What the caller sent is not
        dropped: it is kept in `<vault>/.brain/held/` for the vault's owner
        (`brain doctor` lists it), so an agent's write is never silently lost.
        """
        return hold_aside(self.vault, slug, rel, data, expected_hash)
