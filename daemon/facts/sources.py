"""The logs one vault's facts are read from, and the device log this machine writes.

docs/architecture.md, "Two devices, one vault": each device appends only to
`.brain/facts/<device>.jsonl`; the projection reads every log in `.brain`
(the shared `facts.jsonl` of older versions, each device's log, and the
copies a sync tool makes when two versions of one file meet) in one
deterministic order. A device mints ids in its own slot: id = seq · 2^20 +
slot, the slot taken from the device id, so two devices never mint the same
id.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from .ids import DERIVED_STEP, MAX_ID, derived_id, line_digest
from .log import FactsLog

LEGACY_NAME = "facts.jsonl"
DEVICE_DIR = "facts"
SLOTS = DERIVED_STEP  # slot 0 is left to derived ids (facts/ids.py)
_DEVICE_LOG = re.compile(r"^([0-9a-f]{16})\.jsonl$")


def slot_of(device: str) -> int:
    return 1 + int.from_bytes(hashlib.sha256(device.encode()).digest()[:8], "big") % (SLOTS - 1)


def minted_by(fid: int, slot: int) -> bool:
    return fid > SLOTS and fid % SLOTS == slot


def max_seq(slot: int) -> int:
    return (MAX_ID - slot) // SLOTS


@dataclass
class Source:
    name: str            # path under .brain, the key the projection keeps its read position by
    log: FactsLog
    order: int           # 0 the shared facts.jsonl, 1 a device log, 2 a sync tool's copy
    slot: int | None = None  # a device log's slot

    def precedence(self, fid: int, line_no: int) -> tuple:
        """Lower keeps a contested id: the line that minted it (its device's log, or the shared log's
        sequence), then log order. docs/architecture.md, "Fact ids"."""
        # the shared log counted from 1 and never reached a device's range (docs/architecture.md)
        owned = (self.order == 0 and fid <= SLOTS) or (self.slot is not None and minted_by(fid, self.slot))
        return (0 if owned else 1, self.order, self.name, line_no)


def _is_copy(name: str) -> bool:
    # Syncthing: name.sync-conflict-…; Dropbox: "name (… conflicted copy …)"; iCloud and others: "name 2"
    return not name.startswith(".") and ".torn-" not in name and (name.endswith(".jsonl") or "conflict" in name.lower())


def _real(path: Path, kind) -> bool:
    """Whether `path` is a file (or folder) of that kind itself, not a link to one: a link under `.brain`
    is neither read nor written (docs/architecture.md "Symlinks"); `brain doctor facts` names it."""
    try:
        return kind(os.lstat(path).st_mode)
    except OSError:
        return False


def discover(brain_dir: Path) -> list[Source]:
    """Every facts log under `brain_dir`, in the order the projection reads them."""
    found: list[Source] = []
    legacy = brain_dir / LEGACY_NAME
    if _real(legacy, stat.S_ISREG):
        found.append(Source(LEGACY_NAME, FactsLog(legacy), 0))
    try:
        top = sorted(os.listdir(brain_dir))
    except FileNotFoundError:
        top = []
    for name in top:
        if name.startswith("facts") and name != LEGACY_NAME and _is_copy(name) and _real(brain_dir / name, stat.S_ISREG):
            found.append(Source(name, FactsLog(brain_dir / name), 2))
    folder = brain_dir / DEVICE_DIR
    try:
        inner = sorted(os.listdir(folder)) if _real(folder, stat.S_ISDIR) else []
    except (FileNotFoundError, NotADirectoryError):
        inner = []
    for name in inner:
        path = folder / name
        if not _real(path, stat.S_ISREG):
            continue
        m = _DEVICE_LOG.match(name)
        if m:
            found.append(Source(f"{DEVICE_DIR}/{name}", FactsLog(path), 1, slot_of(m.group(1))))
        elif _is_copy(name):
            found.append(Source(f"{DEVICE_DIR}/{name}", FactsLog(path), 2))
    return sorted(found, key=lambda s: (s.order, s.name))


def reused_ids(sources: list[Source]) -> list[tuple]:
    """(id, (log, line) that keeps it, (log, line) of a later different line, the id that one is read under).

    The projection's rule (docs/architecture.md, "Fact ids"), worked out from the logs alone for `brain doctor`.
    """
    claims: dict[int, list] = {}
    for src in sources:
        for n, rec, _pos, _err, raw in src.log.replay_lines(0):
            if rec is not None and rec["op"] == "insert":
                claims.setdefault(rec["id"], []).append((src.precedence(rec["id"], n), line_digest(raw)))
    out = []
    for fid, lines in claims.items():
        lines.sort()
        seen = {lines[0][1]}
        for prec, digest in lines[1:]:
            if digest not in seen:
                seen.add(digest)
                out.append((fid, lines[0][0][2:], prec[2:], derived_id(digest)))
    return out


def device_log(brain_dir: Path, device: str) -> Path:
    return brain_dir / DEVICE_DIR / f"{device}.jsonl"
