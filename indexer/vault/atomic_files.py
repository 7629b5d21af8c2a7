"""Replace a file in one rename, so a crash leaves the old bytes or the new ones.

Every write to something a person would miss — a page, the config, a
harness's settings, the token list, a vector index sidecar — goes through here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path


def real_inside(root, path) -> str | None:
    """The real path of `path` (symlinks resolved) when it lies inside `root`'s real path, else None."""
    base = os.path.realpath(root)
    real = os.path.realpath(path)
    if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
        return real
    return None


# brain's own temp files: ".<name>.<8 random characters>.tmp", as mkstemp makes them below
TEMP_NAME = re.compile(r"^\.(.+)\.[a-z0-9_]{8}\.tmp$")


# a temp file younger than this may belong to a write still in progress
TEMP_SWEEP_AGE_S = 120.0


def sweep_temp_files(root: Path, rels, min_age_s: float = TEMP_SWEEP_AGE_S) -> list[str]:
    """Delete brain's own temp files (TEMP_NAME) under `root` that a crash left behind.

    Only regular files named the way write_atomic names them, and only when
    older than `min_age_s`, so a writer still between its write and its
    rename is never harmed. Returns the relative paths removed.
    """
    import time

    removed = []
    now = time.time()
    for rel in rels:
        path = Path(root) / rel
        if not TEMP_NAME.match(path.name):
            continue
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < min_age_s:
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(rel)
    return removed


def write_atomic(path: Path, data: bytes, mode: int | None = None, within: Path | None = None) -> None:
    """Write `data` to a temp file beside `path`, fsync it, rename it over `path`.

    A symlink is followed on purpose: its target gets the new bytes and the
    link stays a link (a settings file linked into a dotfiles repository).
    With `within`, a path whose real location is outside that folder is
    refused with PermissionError, before anything is written.

    `mode` defaults to the existing file's permissions; a new file is as open
    as its folder (0o644 in a 0755 vault folder, 0o600 in brain's private
    0700 folders). The temp
    name starts with a dot, so the vault scanner and watcher never take it for
    a page.
    """
    if within is not None:
        real = real_inside(within, path)
        if real is None:
            raise PermissionError(errno.EACCES, f"{path} leads outside {within} (through a symlink)", str(path))
        path = Path(real)
    else:
        path = Path(os.path.realpath(path))
    if mode is not None and not mode & 0o077:
        # a private file's missing folders are private too, never as open as /tmp above them
        make_folders_like_parent(path.parent, folder_mode=0o700)
    else:
        make_folders_like_parent(path.parent)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = stat.S_IMODE(os.stat(path.parent).st_mode) & 0o666
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # the rename itself is durable only once the folder is synced
        fsync_dir(path.parent)
    except OSError:
        pass


def make_folders_like_parent(folder: Path, folder_mode: int | None = None) -> None:
    """Create `folder` and any missing folders above it, each with its parent's permissions
    (or `folder_mode`, when given).

    A new folder in the vault is as open as the vault's own folders, and one
    under brain's private folders as private, whatever the process umask.
    """
    folder = Path(folder)
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        os.chmod(d, folder_mode if folder_mode is not None else stat.S_IMODE(os.stat(d.parent).st_mode))


def fsync_dir(directory: Path) -> None:
    """Make a folder's entries (a new or renamed file's name) durable."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
