"""usage.jsonl: one local line per verb call, for `brain protocol stats`.

Appending never blocks or fails a call: any error here is swallowed. When the
file passes 10 MiB it is renamed to usage.jsonl.1 (a lost line is acceptable;
the writer is shared with the hook log: `daemon/line_log.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..line_log import append_line


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
