"""The date an undated open task was first seen, so it stays put when its page is edited: the
embedded TaskDatesStore (daemon/stores/task_dates.py), over a file of its own.

A task without a due date (`- [ ] call the bank`) is dated by its page; the page's
last change would move it to "now" at every edit of any line, and an old chore would
pass for a new one. So the first date a task is seen on a page (that page's last
change then) is kept, keyed by the page's slug and a hash of the task's text, in a
small SQLite file in the vault's state folder (docs/architecture.md, "Open tasks").

It lives with the state, not the caches: `brain rebuild` keeps it. What it cannot
survive: a new device or a deleted state folder (each task is then first seen again,
dated by its page's last change at that time), a renamed page (new slug) and an edited
task text (a new task). A failure to read or write it dates the task by its page,
as before; it never fails a read.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path

FILE_NAME = "task_dates.sqlite"

_SCHEMA = """CREATE TABLE IF NOT EXISTS task_dates (
    page TEXT NOT NULL, task TEXT NOT NULL, first_seen TEXT NOT NULL, PRIMARY KEY (page, task)
) WITHOUT ROWID"""


def task_key(text: str) -> str:
    """The task's identity on its page: its words, whatever the spacing."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:32]


class SQLiteTaskDates:
    """The task dates of one vault, in `path` (created private on the first use), on one connection.

    A read writes nothing unless a task is new: context_pack asks for every card's tasks, and a
    write (a transaction and its sync) per card would sit on the read path.
    """

    def __init__(self, path: Path):
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            if not self.path.exists():
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))   # private, like all state
            db = sqlite3.connect(self.path, timeout=2.0, check_same_thread=False)
            db.execute(_SCHEMA)
            self._db = db
        return self._db

    def first_seen(self, page: str, tasks: list[str], seen: str) -> dict[str, str]:
        """See the contract (daemon/stores/task_dates.py)."""
        if not tasks:
            return {}
        keys = {t: task_key(t) for t in tasks}
        wanted = sorted(set(keys.values()))
        try:
            with self._lock:
                db = self._conn()
                marks = ",".join("?" * len(wanted))
                known = dict(db.execute(f"SELECT task, first_seen FROM task_dates WHERE page = ? AND task IN ({marks})",
                                        [page, *wanted]))
                new = [k for k in wanted if k not in known]
                if new:
                    with db:
                        db.executemany("INSERT OR IGNORE INTO task_dates (page, task, first_seen) VALUES (?, ?, ?)",
                                       [(page, k, seen) for k in new])
                    known.update(db.execute(f"SELECT task, first_seen FROM task_dates WHERE page = ? AND task IN "
                                            f"({','.join('?' * len(new))})", [page, *new]))
        except (sqlite3.Error, OSError):
            self.close()   # a broken file is opened afresh next time; this read dates by the page
            return {t: seen for t in tasks}
        return {t: known.get(k, seen) for t, k in keys.items()}

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
