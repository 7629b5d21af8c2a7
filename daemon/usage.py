"""usage.jsonl: one local line per verb call, for `brain protocol stats`.

Appending never blocks or fails a call: any error here is swallowed. When the
file passes 10 MiB it is renamed to usage.jsonl.1 (a lost line is acceptable).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ROTATE_BYTES = 10 * 1024 * 1024


class UsageLog:
    def __init__(self, path: Path):
        self.path = Path(path)

    def record(self, entry: dict) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                if self.path.stat().st_size > ROTATE_BYTES:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            except FileNotFoundError:
                pass
            line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError:
            pass

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
