"""One writer per vault: an exclusive lock on `<vault>/.brain/writer.lock`.

The lock lives beside the facts log it protects, so it holds whatever config
or BRAIN_HOME each process uses. The kernel drops it when its holder dies, so
a stale lock cannot outlive a crash; the file only says who held it last.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from pathlib import Path

from .private_files import private_dir
from ..indexer.vault.brain_folder import BrainFolderError, brain_folder
from ..indexer.vault.timestamps import now_iso


class VaultLocked(RuntimeError):
    def __init__(self, path: Path, holder: dict):
        who = f"pid {holder.get('pid', '?')} ({holder.get('kind', 'unknown')}, since {holder.get('since', '?')})"
        super().__init__(f"the vault's writer lock {path} is held by {who}")
        self.holder = holder


class VaultLock:
    def __init__(self, vault: Path):
        self.vault = Path(vault)
        self.path = self.vault / ".brain" / "writer.lock"
        self._fd: int | None = None

    def holder(self) -> dict:
        try:
            return json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(self, kind: str, wait_s: float = 0.0) -> None:
        """Take the lock, waiting up to `wait_s`; raise VaultLocked if it stays held."""
        if self._fd is not None:
            return
        # never through a `.brain` link to elsewhere (indexer/vault/brain_folder.py)
        private_dir(brain_folder(self.vault))
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            raise BrainFolderError(f"{self.path} is a symlink; brain takes its writer lock only in a real file.\n"
                                   f"fix: remove the link (`rm '{self.path}'`); brain makes the file again.") from None
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise VaultLocked(self.path, self.holder()) from None
                time.sleep(0.02)
        os.ftruncate(fd, 0)
        stamp = {"pid": os.getpid(), "kind": kind, "since": now_iso()}
        os.pwrite(fd, json.dumps(stamp).encode(), 0)
        self._fd = fd

    def is_free(self) -> bool:
        """True when no process holds the lock (a momentary probe)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return True
        except OSError:
            return False
        finally:
            os.close(fd)

    def annotate(self, **extra) -> None:
        """Add facts about the holder to its stamp (the daemon adds its socket path)."""
        if self._fd is None:
            return
        stamp = {**self.holder(), **extra, "pid": os.getpid()}
        data = json.dumps(stamp).encode()
        # overwrite in place, then trim: a reader never sees an empty stamp
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def lost(self) -> str | None:
        """Why the held lock no longer guards the folder at its path, or None.

        "gone": the vault (or its .brain folder) was deleted, moved or
        replaced, so the facts log open in this process is no longer the one
        at the path; "unreadable": the folder denies us access.
        """
        if self._fd is None:
            return None
        try:
            now = os.stat(self.path)
        except PermissionError:
            return "unreadable"
        except OSError:
            return "gone"
        held = os.fstat(self._fd)
        return None if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino) else "gone"

    @property
    def held(self) -> bool:
        return self._fd is not None
