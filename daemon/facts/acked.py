"""This device's journal of acknowledged log lines, kept in the state folder where a rollback of the vault
cannot reach it.

docs/architecture.md, "When an older log is put back": every record line
this device acknowledged is appended here too (fsync'd before the caller is
told), so that
- the highest id the device ever minted survives an older copy of its log
  being put back (`git checkout`, a backup restore, a sync tool's copy), and
  no id is minted twice;
- a line such a copy dropped is written again, the same bytes under the same id.

The file is `device.acked.jsonl`: the log lines as written, after an optional first
line `{"minted": N}` that carries the high-water mark past a trim. It keeps
at least the last KEEP lines; past twice that it is rewritten atomically.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ...indexer.vault.atomic_files import write_atomic
from ...indexer.vault.brain_folder import open_no_follow
from ..private_files import FILE_MODE
from .ids import MAX_ID

log = logging.getLogger("brain.facts")

KEEP = 10_000  # lines kept at a trim: months of facts for a person, hours for a busy agent fleet


def journal_file(device_file: Path) -> Path:
    return device_file.with_name(device_file.name + ".acked.jsonl")  # `device.acked.jsonl`


class AckJournal:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._minted = 0
        self._count = 0
        for raw in self.lines(with_mark=True):
            self._count += 1
            self._minted = max(self._minted, _highest(raw))

    @property
    def minted(self) -> int:
        """The highest id any acknowledged line claimed (0 with none)."""
        return self._minted

    def lines(self, with_mark: bool = False) -> list[bytes]:
        """The acknowledged log lines, oldest first (an unfinished last line was never acknowledged)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out = [raw for raw in data.split(b"\n")[:-1] if raw.strip()]
        if not with_mark and out and out[0].startswith(b'{"minted"'):
            out = out[1:]
        return out

    def check_writable(self) -> None:
        """LinkRefusedError when the journal is a link: refused before the log is written, so a fact is
        never in the log yet unjournaled (its record below refuses a link swapped in later, too)."""
        os.close(self._open(os.O_RDONLY | os.O_CREAT))

    def _open(self, flags: int) -> int:
        # never through a link: its target may be any file of the user's (docs/architecture.md "Symlinks")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open_no_follow(self.path.parent, self.path.name, flags, FILE_MODE, folder_mode=None)

    def record(self, lines: list[bytes]) -> None:
        """Append acknowledged lines durably; the caller tells its caller only after this returns."""
        if not lines:
            return
        fd = self._open(os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # a crash mid-append left part of a line whose write was never acknowledged
                keep = os.pread(fd, size, 0).rfind(b"\n") + 1
                os.ftruncate(fd, keep)
            payload = b"".join(raw.strip() + b"\n" for raw in lines)
            written = 0
            while written < len(payload):
                written += os.write(fd, payload[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        self._count += len(lines)
        self._minted = max([self._minted, *(_highest(raw) for raw in lines)])
        if self._count > 2 * KEEP:
            self._trim()

    def _trim(self) -> None:
        kept = self.lines()[-KEEP:]
        mark = json.dumps({"minted": self._minted}).encode()
        # `within`: a link swapped in since is not followed out of the state folder
        write_atomic(self.path, b"\n".join([mark, *kept]) + b"\n", mode=FILE_MODE, within=self.path.parent)
        self._count = len(kept) + 1
        log.info("journal of acknowledged facts trimmed to its last %d lines", len(kept))

    def forget_all(self) -> None:
        """Start over (the device id changed because the state folder was copied: what it lists is
        the original machine's, and that machine keeps its own)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self._minted = self._count = 0


def _highest(raw: bytes) -> int:
    """The id an insert line minted, or the mark a trim left (expiries mint nothing: they may name a
    derived id, far above any minted one)."""
    try:
        rec = json.loads(raw)
    except ValueError:
        return 0
    if not isinstance(rec, dict):
        return 0
    value = rec.get("minted") if "minted" in rec else rec.get("id") if rec.get("op") == "insert" else 0
    return value if type(value) is int and 0 < value <= MAX_ID else 0
