"""Small append-only logs of whole lines, rotated past a size.

Shared by the daemon's usage log (`server/usage.py`) and the session-start
hook's log (`hooks/session_start.py`): a hook runs outside the daemon and
may import only the daemon's shared modules and client side, so the writer
lives here rather than in `server/`. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

ROTATE_BYTES = 10 * 1024 * 1024


def append_line(path: Path, line: bytes, rotate_bytes: int = ROTATE_BYTES) -> None:
    """Append one line with O_APPEND (whole lines, even from several processes);
    past `rotate_bytes` the file first moves to `<name>.1`. Never raises."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path.stat().st_size > rotate_bytes:
                os.replace(path, path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass
