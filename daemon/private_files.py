"""Private on disk: brain's own folders are 0700 and their files 0600.

That covers everything brain writes outside the vault (config, cache,
state and runtime folders: SQLite and its -wal/-shm, tantivy, vectors,
tokens, usage log, logs, pid file, socket) and the vault's `.brain/` folder
(the facts logs, the writer lock). The entry points narrow the umask, so files
made by SQLite, tantivy or hnswlib are private from their first byte; the
daemon repairs older files when it starts, and `brain doctor permissions`
checks them. Standard library only: the CLI's entry point imports this.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600

_user_umask: int | None = None


def restrict_umask() -> None:
    """Make everything this process creates private unless it sets a mode itself."""
    global _user_umask
    old = os.umask(PRIVATE_UMASK)
    if _user_umask is None:
        _user_umask = old


def user_umask() -> int:
    """The umask the person runs brain with (before restrict_umask narrowed it)."""
    if _user_umask is not None:
        return _user_umask
    cur = os.umask(0)
    os.umask(cur)
    return cur


def private_roots(places, vault: Path | None) -> list[Path]:
    roots = [places.config_dir, places.cache_root, places.state_dir, places.runtime_dir]
    if vault is not None:
        roots.append(Path(vault) / ".brain")
    return roots


def loose_paths(roots):
    """(path, mode, wanted mode) of each folder or file under `roots` that others could reach."""
    for root in roots:
        if not os.path.isdir(root) or os.path.islink(root):
            continue
        for dirpath, _dirnames, filenames in os.walk(root):
            for p in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    continue  # never followed: a link's target is not ours to change
                mode = stat.S_IMODE(st.st_mode)
                if mode & 0o077:
                    yield p, mode, DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE


def repair_modes(roots) -> list[str]:
    """Set 0700 / 0600 where others had access; returns the paths changed."""
    fixed = []
    for p, _mode, want in list(loose_paths(roots)):
        try:
            os.chmod(p, want)
        except OSError:
            continue
        fixed.append(p)
    return fixed


def private_dir(path: Path) -> Path:
    """Make a folder of brain's own (parents too), 0700 whatever the umask."""
    path = Path(path)
    missing = []
    here = path
    while not here.exists() and here.parent != here:
        missing.append(here)
        here = here.parent
    for d in reversed(missing):  # every folder made here is 0700, not as open as /tmp above it
        d.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(d, DIR_MODE)
    if stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path
