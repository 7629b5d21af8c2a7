"""The vault's own `.brain/` folder: a real folder inside the vault, or nothing is written there.

It holds the facts log, the writer lock and held pages. A `.brain` that is a
symlink (or leads, through one, anywhere but `<vault real path>/.brain`)
would send those writes to another place, perhaps a folder other users can
read or another vault; brain refuses instead and says how to fix it
(docs/architecture.md "Symlinks").
"""

from __future__ import annotations

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
