"""Small JSON files in the state dir that several processes edit (tokens, OAuth grants).

Reads take no lock (files are replaced atomically); read-modify-write holds
an flock on a side file so a `brain auth …` command and a running HTTP
server never lose each other's change. Files are 0600: they hold only
hashes, but they still say which clients exist.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

from ...indexer.vault.atomic_files import write_atomic


class StateFileError(ValueError):
    pass


def load_json(path: Path, default):
    """The file's JSON, `default` when absent; StateFileError when unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as e:
        raise StateFileError(f"the file {path} is unreadable ({e})") from None


def save_json(path: Path, data) -> None:
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode(), mode=0o600)


@contextmanager
def editing(path: Path):
    """Serialize read-modify-write of `path` across processes (flock on a side file)."""
    import fcntl

    lock = path.with_suffix(".lock")
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class CachedJson:
    """A state file's parsed content, re-read only when its mtime changes
    (so a revocation by another process applies from the next request)."""

    def __init__(self, path: Path, default):
        self.path = path
        self.default = default
        self._mtime: int | None = None
        self._data = default

    def get(self):
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            self._mtime, self._data = None, self.default
            return self._data
        if mtime != self._mtime:
            self._data = load_json(self.path, self.default)
            self._mtime = mtime
        return self._data
