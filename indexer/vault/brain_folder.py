"""The vault's own `.brain/` folder: a real folder inside the vault, or nothing is written there.

It holds the facts log, the writer lock and held pages. A `.brain` that is a
symlink (or leads, through one, anywhere but `<vault real path>/.brain`)
would send those writes to another place, perhaps a folder other users can
read or another vault; brain refuses instead and says how to fix it
(docs/architecture.md "Symlinks").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

BRAIN_DIR = ".brain"


class BrainFolderError(RuntimeError):
    """`<vault>/.brain` is not a real folder inside the vault; the message names the fix."""


def brain_folder(vault: Path, create: bool = True) -> Path:
    """`<vault>/.brain`, made 0700 when missing; BrainFolderError when it is a link or not a folder."""
    base = os.path.realpath(vault)
    path = Path(base) / BRAIN_DIR
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return path
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:   # made meanwhile: check what it is
            pass
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        raise BrainFolderError(
            f"{path} is a symlink to {target}; brain keeps the facts log, its lock and held pages only in a "
            f"real folder inside the vault, so it writes nothing there.\n"
            f"fix: replace the link with a folder holding the same files: "
            f"`rm '{path}' && cp -a '{target}' '{path}'` (then check `brain doctor`).")
    if not stat.S_ISDIR(st.st_mode):
        raise BrainFolderError(f"{path} is not a folder; brain keeps the facts log, its lock and held pages "
                               f"there.\nfix: move the file aside (`mv '{path}' '{path}.bak'`) and run brain again.")
    if os.path.realpath(path) != str(path):   # a folder on the way was swapped for a link meanwhile
        raise BrainFolderError(f"{path} resolves to {os.path.realpath(path)}, outside the vault; brain writes "
                               "nothing there.\nfix: make it a real folder inside the vault.")
    return path


class LinkRefusedError(BrainFolderError):
    """A folder or file brain would write (under `.brain/`, or its journal) is a link; nothing went through it."""


def open_no_follow(root: Path, rel: str, flags: int, mode: int = 0o600, folder_mode: int | None = 0o700) -> int:
    """Open `root/rel` without following a link anywhere below `root`; LinkRefusedError when one is in the way.

    `root` (the vault's folder, which may itself be reached through a link) is
    opened as it is; every folder below it is opened relative to the one
    above with O_NOFOLLOW, and the file too, so a link swapped in at any level,
    at any moment, is refused rather than written through (docs/architecture.md
    "Symlinks"). With O_CREAT, missing folders are made (`folder_mode`) and a
    new file's name is synced; the folder holding the file is set to
    `folder_mode` when it is looser.
    """
    parts = Path(rel).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, name in enumerate(parts[:-1]):
            fd = _step_into(fd, name, Path(root, *parts[:i + 1]), create=bool(flags & os.O_CREAT))
        if folder_mode is not None and stat.S_IMODE(os.fstat(fd).st_mode) & ~folder_mode:
            os.fchmod(fd, folder_mode)   # a real folder inside, checked above: never a link's target
        return _open_file(fd, parts[-1], flags, mode, Path(root, *parts))
    finally:
        os.close(fd)


def _step_into(parent_fd: int, name: str, shown: Path, create: bool) -> int:
    """The folder `name` under `parent_fd`, opened without following a link (made 0700 when missing)."""
    for _attempt in range(2):
        try:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
            os.close(parent_fd)
            return child
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o700, dir_fd=parent_fd)
                os.fsync(parent_fd)
            except FileExistsError:   # made meanwhile: open what is there
                pass
        except OSError as e:
            if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            raise _refused(parent_fd, name, shown) from e
    raise FileNotFoundError(errno.ENOENT, "folder vanished while it was made", str(shown))


def _open_file(dir_fd: int, name: str, flags: int, mode: int, shown: Path) -> int:
    exclusive = flags & os.O_CREAT and flags & os.O_EXCL
    for _attempt in range(3):
        if not exclusive:
            try:
                return os.open(name, (flags & ~os.O_CREAT) | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
            except FileNotFoundError:
                if not flags & os.O_CREAT:
                    raise
            except OSError as e:
                if e.errno != errno.ELOOP:
                    raise
                raise _refused(dir_fd, name, shown) from e
        try:
            # made here, not through a dangling link (O_EXCL never follows one); its name made durable
            fd = os.open(name, flags | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
        except FileExistsError:   # made meanwhile, or a link put there: look again
            if exclusive:
                raise
            continue
        os.fsync(dir_fd)
        return fd
    raise _refused(dir_fd, name, shown)


def _refused(dir_fd: int, name: str, shown: Path) -> BrainFolderError:
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        target = os.readlink(name, dir_fd=dir_fd)
        return LinkRefusedError(
            f"{shown} is a symlink to {target}; brain writes its facts only to real files in real folders, "
            f"so it wrote nothing there.\nfix: replace the link with what it points to: "
            f"`rm '{shown}' && cp -a '{target}' '{shown}'` (then check `brain doctor facts`).")
    return BrainFolderError(f"{shown} is not a folder; brain keeps the facts logs there.\n"
                            f"fix: move it aside (`mv '{shown}' '{shown}.bak'`) and run brain again.")


def links_under(folder: Path) -> list[tuple[Path, str]]:
    """(link, where it points) for every symlink below `folder`, never following one (for `brain doctor`)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):   # os.walk does not descend into linked folders
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            if p.is_symlink():
                found.append((p, os.readlink(p)))
    return found
