"""usage.jsonl: one local line per verb call, for `brain protocol stats`.

Appending never blocks or fails a call: any error here is swallowed. When the
file passes 10 MiB it is renamed to usage.jsonl.1 (a lost line is acceptable).
"""

from __future__ import annotations

import json
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


class UsageLog:
    def __init__(self, path: Path):
        self.path = Path(path)

    def record(self, entry: dict) -> None:
        append_line(self.path, (json.dumps(entry, separators=(",", ":")) + "\n").encode())

    def read(self) -> list[dict]:
        out = []
        for p in (self.path.with_name(self.path.name + ".1"), self.path):
            try:
                lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict):
                    out.append(rec)
        return out
