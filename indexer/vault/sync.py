"""Live sync: watchdog events → debounced, coalesced batches → VaultIndex.apply.

Events only name paths; the batch re-reads the disk, so an editor's atomic
save (write a temp file, rename it over the page) is one change to the page,
a flurry of saves is one re-index, and a `git checkout` of 1,000 files is a
few batches with one commit each. When the kernel's inotify watch limit is
reached, a polling observer takes over (slower, but nothing is missed) and a
warning says how to raise the limit. The worker never dies on a bad file or
a failed batch: it logs, counts, and applies the batch again after a pause.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from watchdog.events import (
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileCreatedEvent, FileDeletedEvent, FileModifiedEvent,
    FileMovedEvent, FileSystemEventHandler,
)

from .scan import IGNORE_FILE, hidden, is_markdown

log = logging.getLogger("brain.sync")

DEBOUNCE_S = 0.12     # quiet time that ends a burst
MAX_DELAY_S = 0.5     # a never-ending burst is still applied this often
RETRY_FIRST_S, RETRY_MAX_S = 1.0, 30.0   # a failed batch is re-applied after this pause
_EVENTS = [FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent,
           DirCreatedEvent, DirDeletedEvent, DirMovedEvent]
INOTIFY_FIX = ("raise the limit: `sudo sysctl fs.inotify.max_user_watches=524288` "
               "(persist it in /etc/sysctl.d/)")


class Watched(Protocol):
    """What the watcher needs of the index it feeds (indexing_pass.IndexingPass is one); declared
    here so the pass, which starts the watcher, and the watcher need not name each other."""

    vault: Path

    def apply(self, paths: Iterable[str] = (), dirs: Iterable[str] = (),
              moves: Iterable[tuple[str, str]] = ()) -> Any: ...


class _Handler(FileSystemEventHandler):
    def __init__(self, sync: "VaultSync"):
        self.sync = sync

    def on_any_event(self, event):
        try:
            self.sync.note_event(event)
        except Exception:  # an odd event must not kill the observer thread
            log.debug("event %r ignored", event, exc_info=True)


class VaultSync:
    def __init__(self, index: Watched, *, debounce_s: float = DEBOUNCE_S, max_delay_s: float = MAX_DELAY_S,
                 force_polling: bool = False, poll_interval_s: float = 1.0, observer_factory=None):
        self.index = index
        self.root = os.path.realpath(index.vault)
        self.debounce_s = debounce_s
        self.max_delay_s = max_delay_s
        self.force_polling = force_polling
        self.poll_interval_s = poll_interval_s
        self.observer_factory = observer_factory
        self.mode: str | None = None       # "inotify" (or the platform's native observer) | "polling"
        self.warning: str | None = None
        self.failures = 0
        self._cond = threading.Condition()
        self._paths: set[str] = set()
        self._dirs: set[str] = set()
        self._moves: list[tuple[str, str]] = []
        self._first = 0.0
        self._last = 0.0
        self._busy = False
        self._retry_s = 0.0   # pause before re-applying a batch that failed (doubles, capped)
        self._stop = False
        self._observer: Any = None                  # the watchdog observer (inotify or polling)
        self._worker: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> None:
        self._observer = self._start_observer()
        self._worker = threading.Thread(target=self._run, name="brain-sync", daemon=True)
        self._worker.start()

    def _start_observer(self):
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        if not self.force_polling:
            factory = self.observer_factory or Observer
            obs = factory()
            try:
                obs.schedule(_Handler(self), self.root, recursive=True, event_filter=_EVENTS)
                obs.start()
                self.mode = "inotify" if "Inotify" in type(obs).__name__ else type(obs).__name__.lower()
                return obs
            except OSError as e:
                try:
                    obs.stop()
                except Exception:
                    pass
                if e.errno not in (errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.ENOMEM):
                    raise
                self.warning = f"the inotify watch limit was reached ({e}); watching by polling instead — {INOTIFY_FIX}"
                log.warning(self.warning)
        obs = PollingObserver(timeout=self.poll_interval_s)
        obs.schedule(_Handler(self), self.root, recursive=True)
        obs.start()
        self.mode = "polling"
        return obs

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._observer is not None:
            try:
                self._observer.stop()
                self._observer.join(timeout=5)
            except Exception:
                log.debug("observer did not stop cleanly", exc_info=True)
        if self._worker is not None:
            self._worker.join(timeout=30)

    # -- events -----------------------------------------------------------------

    def _rel(self, path) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not path:
            return None
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return None
        return rel.replace(os.sep, "/")

    def _wanted(self, rel: str | None, is_dir: bool) -> str | None:
        """`rel` when a change there matters, else None."""
        if rel is None:
            return None
        if rel == IGNORE_FILE:
            return rel
        if hidden(rel):
            return None
        return rel if is_dir or is_markdown(rel) else None

    def note_event(self, event) -> None:
        """Record where something happened; the batch finds out what."""
        src = self._rel(event.src_path)
        dst = self._rel(getattr(event, "dest_path", "") or "")
        kind = event.event_type
        with self._cond:
            if event.is_directory:
                if kind == "modified":
                    return  # a folder's own mtime: its files report for themselves
                hit = False
                for rel in (src, dst):
                    folder = self._wanted(rel, True)
                    if folder is not None:
                        self._dirs.add(folder)
                        hit = True
                if not hit:
                    return
            elif kind == "moved":
                src_ok, dst_ok = self._wanted(src, False), self._wanted(dst, False)
                if src_ok is None and dst_ok is None:
                    return
                if src_ok is not None:
                    self._paths.add(src_ok)
                if dst_ok is not None:
                    self._paths.add(dst_ok)
                if src_ok is not None and dst_ok is not None:
                    self._moves.append((src_ok, dst_ok))
            else:
                page = self._wanted(src, False)
                if page is None:
                    return
                self._paths.add(page)
            now = time.monotonic()
            if not self._first:
                self._first = now
            self._last = now
            self._cond.notify_all()

    def pending_count(self) -> int:
        with self._cond:
            return len(self._paths) + len(self._dirs)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every event seen so far has been applied (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._paths or self._dirs or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    # -- the worker -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stop and not (self._paths or self._dirs):
                    self._cond.wait()
                if self._stop:
                    return
                while not self._stop:
                    now = time.monotonic()
                    quiet, age = now - self._last, now - self._first
                    if quiet >= self.debounce_s or age >= self.max_delay_s:
                        break
                    self._cond.wait(max(0.005, min(self.debounce_s - quiet, self.max_delay_s - age)))
                paths, dirs, moves = self._paths, self._dirs, self._moves
                self._paths, self._dirs, self._moves = set(), set(), []
                self._first = self._last = 0.0
                self._busy = True
            try:
                self.index.apply(paths, dirs, moves)
                self._retry_s = 0.0
            except Exception:
                self.failures += 1
                self._retry_s = min(RETRY_MAX_S, self._retry_s * 2 or RETRY_FIRST_S)
                log.exception("applying %d changed paths failed; retrying in %.0f s",
                              len(paths) + len(dirs), self._retry_s)
                with self._cond:  # a full disk or a busy database passes: keep the paths, try again later
                    self._paths |= paths
                    self._dirs |= dirs
                    self._moves[:0] = moves
                    self._first = self._last = time.monotonic() + self._retry_s
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

