"""Acknowledged lines that no log holds any more, written again from the journal (acked.py).

docs/architecture.md, "When an older log is put back". A line only goes
missing when bytes the cache had read change, which makes the projection
read every log from the start (`full_projections` counts it); so the journal
is compared with the logs once after each such read and once at open, never
on the plain append path. The rule: an acknowledged line that no log holds is
always written again, the same bytes, so it keeps its id. Removing a fact on
purpose is `forget`, which appends an expiry and removes nothing.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from typing import TYPE_CHECKING, Any, Callable

from .acked import AckJournal
from .ids import line_digest
from .log import FactsLog
from ..protocol.errors import Unavailable
from ...indexer.vault.timestamps import now_iso

log = logging.getLogger("brain.facts")

RESTORED_KEY = "restored"  # facts.sqlite meta: {"lines", "last", "ids"} for brain doctor
_IDS_SHOWN = 20


class Restorer:
    """Mixin of SqliteFactsStore, which brings `db`, `lock`, `journal`, `_write` and `full_projections`."""

    db: sqlite3.Connection
    lock: threading.RLock
    journal: AckJournal | None
    log: FactsLog
    full_projections: int

    if TYPE_CHECKING:
        def _write(self, build: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]: ...  # store.py

    _acks_checked = -1  # the value of full_projections when the journal was last compared with the logs

    def unheld_acknowledged(self) -> list[bytes]:
        """The journal's lines that no log (nor a sync tool's copy) holds, oldest first; the caller holds
        the lock and has caught up. Empty when nothing was re-read since the last comparison."""
        if self.journal is None or self._acks_checked == self.full_projections:
            return []
        missing, seen = [], set()
        for raw in self.journal.lines():
            digest = line_digest(raw)
            if digest in seen:
                continue
            seen.add(digest)
            if not self.db.execute("SELECT 1 FROM line_homes WHERE digest=?", (digest,)).fetchone():
                missing.append(raw.strip())
        return missing

    def restore_acknowledged(self) -> int:
        """Write again the acknowledged lines no log holds any more; how many were written."""
        with self.lock:
            if self.journal is None or self._acks_checked == self.full_projections:
                return 0
            before = self.restored_count()
            self._write(lambda: [])
            return self.restored_count() - before

    def _restore_quietly(self) -> None:
        try:
            self.restore_acknowledged()
        except (OSError, sqlite3.Error, Unavailable) as e:  # the next write tries again
            log.warning("acknowledged facts missing from the log could not be written again yet: %s", e)

    def note_restored(self, lines: list[bytes]) -> None:
        """Keep count for brain doctor of what was written again, and say so in the daemon's log."""
        ids = []
        for raw in lines:
            try:
                rec = json.loads(raw)
                ids.append(rec["id"] if rec.get("op") == "insert" else f"expiry of {rec['id']}")
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        got = self._restored()
        got = {"lines": got["lines"] + len(lines), "last": now_iso(), "ids": (got["ids"] + ids)[-_IDS_SHOWN:]}
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (RESTORED_KEY, json.dumps(got)))
        log.warning("%d acknowledged line(s) were missing from %s (an older copy was put back); written again: %s",
                    len(lines), self.log.path, ", ".join(f"#{i}" if isinstance(i, int) else i for i in ids[:10]))

    def restored_count(self) -> int:
        return self._restored()["lines"]

    def _restored(self) -> dict:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (RESTORED_KEY,)).fetchone()
        try:
            got = json.loads(row[0]) if row else {}
        except ValueError:
            got = {}
        return {"lines": int(got.get("lines", 0)), "last": got.get("last"), "ids": list(got.get("ids", []))}


def restorations(cache_file) -> dict | None:
    """What the daemon wrote again from the journal, read from the facts cache opened read only
    (brain doctor); None with no cache, or nothing restored."""
    if not cache_file.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{cache_file}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT value FROM meta WHERE key=?", (RESTORED_KEY,)).fetchone()
        finally:
            db.close()
        return json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError):
        return None
