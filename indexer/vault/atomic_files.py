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


class ChangedMeanwhile(OSError):
    """The file is no longer what the caller read (write_atomic's `expect`); it was left as it is."""


ANY = object()   # write_atomic's `expect` when the caller replaces whatever is there


def write_atomic(path: Path, data: bytes, mode: int | None = None, within: Path | None = None,
                 expect=ANY) -> None:
    """Write `data` to a temp file beside `path`, fsync it, rename it over `path`.

    A symlink is followed on purpose: its target gets the new bytes and the
    link stays a link (a settings file linked into a dotfiles repository).
    With `within`, a path whose real location is outside that folder is
    refused with PermissionError, before anything is written.

    `mode` defaults to the existing file's permissions; a new file is as open
    as its folder (0o644 in a 0755 vault folder, 0o600 in brain's private
    0700 folders). With `expect` (the bytes the caller read, or None for a
    file that was absent), the file is replaced only if it still holds them
    at the rename (`swap_if_unchanged`); otherwise it is left as another
    program saved it and ChangedMeanwhile is raised. The temp
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
        if expect is ANY:
            os.replace(tmp, path)
        else:
            swap_if_unchanged(tmp, path, expect, data)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # the rename itself is durable only once the folder is synced
        fsync_dir(path.parent)
    except OSError:
        pass


def swap_if_unchanged(tmp: str, path: Path, expect: bytes | None, data: bytes) -> None:
    """Put `tmp` at `path` only if `path` holds `expect` (None: is absent); ChangedMeanwhile, `path` as it
    was, otherwise.

    Checked by the rename itself where the system can: a new file is linked
    in, which fails if one appeared; an existing one is exchanged with the
    temp file in one step (Linux renameat2) and the bytes taken out are
    compared, then put back if another program had saved in between. So a
    save between the caller's read and the rename is never overwritten.
    Elsewhere the file is read again right before a plain rename.
    """
    changed = ChangedMeanwhile(errno.EAGAIN, f"{path} changed since it was read", str(path))
    if expect is None:
        try:
            os.link(tmp, path)   # fails when a file appeared meanwhile
        except FileExistsError:
            if os.path.isdir(path):   # a folder named like the file: not a change, a refusal
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
            raise changed from None
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            if os.path.lexists(path):   # no hard links here: the check and the rename are two steps
                raise changed from None
            os.replace(tmp, path)
            return
        os.unlink(tmp)
        return
    if not _exchange(tmp, path):
        if _read(path) != expect:
            raise changed
        os.replace(tmp, path)
        return
    if _read(Path(tmp)) != expect:   # what was taken out is not what the caller read: put it back
        _exchange(tmp, path)
        if _read(Path(tmp)) != data:   # a second save came in between the two steps: the newer one stays
            _exchange(tmp, path)
        raise changed
    os.unlink(tmp)


_RENAME_EXCHANGE = 2


def _exchange(a: str, b) -> bool:
    """Swap two names in one step; False when this system or file system cannot."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100
    if fn(at_cwd, os.fsencode(a), at_cwd, os.fsencode(str(b)), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    if err == errno.ENOENT:   # the file went meanwhile: not what the caller read
        raise ChangedMeanwhile(err, f"{b} changed since it was read", str(b))
    raise OSError(err, os.strerror(err), str(b))


def _read(path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


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
