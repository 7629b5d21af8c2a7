"""A facts log (`.brain/facts/<device>.jsonl`, or the older shared `facts.jsonl`): the append-only record.

Every event (insert, expire) is one JSON line, written with a single
`write()` on an O_APPEND descriptor and fsync'd before the caller is told it
happened. A line torn by a crash was never acknowledged: the writer moves it
aside (never deletes it) and truncates the log to its last whole line.

Other programs write the file too (sync tools and editors replace it by
rename, scripts append to it): before each append the writer checks that the
descriptor it holds is still the file at the path and that the file ends on
a line boundary, and after it checks that the record landed there whole
(docs/architecture.md, "When another program writes the log").
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from ...indexer.vault.atomic_files import fsync_dir
from .homes import move_problem
from .ids import id_problem
from ..private_files import FILE_MODE, private_dir

log = logging.getLogger("brain.facts")


class FactsLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._fd: int | None = None
        self.set_aside: list[bytes] = []  # torn tails this writer moved aside (their ids stay claimed)

    # -- writing -----------------------------------------------------------

    def open_for_append(self) -> None:
        """Prepare to append: make the file, set aside a torn tail."""
        private_dir(self.path.parent)
        self._repair_torn_tail()
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        if created:
            # the file's fsync does not cover its name: make the new entry durable too
            fsync_dir(self.path.parent)

    def held_is_current(self) -> bool:
        """Whether the open descriptor is the file now at the path (not one renamed over or deleted)."""
        if self._fd is None:
            return False
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return False
        held = os.fstat(self._fd)
        return (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino)

    def reopen(self) -> None:
        """Follow the path to whatever file is there now (after a rename over ours)."""
        self.close()
        self.open_for_append()

    def ends_on_line_boundary(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() == 0:
                    return True
                f.seek(-1, os.SEEK_END)
                return f.read(1) == b"\n"
        except FileNotFoundError:
            return True

    def repair_torn_tail(self) -> None:
        """Move an unterminated last line aside (a crashed write, or another program's unfinished one)."""
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with open(self.path, "rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            # find the start of the unterminated last line
            back = min(size, 1 << 20)
            f.seek(size - back)
            chunk = f.read(back)
            cut = chunk.rfind(b"\n")
            start = size - back + cut + 1 if cut >= 0 else 0
            f.seek(start)
            tail = f.read()
            aside = self.path.with_name(self.path.name + f".torn-{start}")
            n = 1
            while aside.exists():  # a second tear at the same offset keeps the first one too
                aside = self.path.with_name(self.path.name + f".torn-{start}.{n}")
                n += 1
            # the copy is on disk before the log is cut, so a crash in between loses nothing
            with os.fdopen(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE), "wb") as out:
                out.write(tail)
                out.flush()
                os.fsync(out.fileno())
            fsync_dir(self.path.parent)
            f.truncate(start)
            f.flush()
            os.fsync(f.fileno())
        self.set_aside.append(tail)
        log.warning("facts log ended in a torn line (%d bytes, never acknowledged); kept it in %s", len(tail), aside)

    def append(self, records: list[dict], before: Sequence[bytes] = ()) -> tuple[int, bytes]:
        """Append records (after the whole lines `before`, copied as they are) durably;
        returns where they start and the bytes written."""
        if self._fd is None:
            self.open_for_append()
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
        payload = b"".join(line + b"\n" for line in before) + data.encode("utf-8")
        start = os.fstat(self._fd).st_size  # type: ignore[arg-type]
        try:
            written = 0
            while written < len(payload):
                written += os.write(self._fd, payload[written:])  # type: ignore[arg-type]
            os.fsync(self._fd)  # type: ignore[arg-type]
        except BaseException:
            # not acknowledged, so not kept: a partial line left behind would
            # swallow the next record appended after it
            self._undo(start)
            raise
        # with O_APPEND the bytes went to the end as it was then, which another writer may have moved
        return os.fstat(self._fd).st_size - len(payload), payload  # type: ignore[arg-type]

    def landed(self, start: int, payload: bytes) -> bool:
        """Whether `payload` is a run of whole lines at `start` of the file now at the path."""
        if not self.held_is_current() or start < 0:
            return False
        before = os.pread(self._fd, 1, start - 1) if start else b"\n"  # type: ignore[arg-type]
        return before == b"\n" and os.pread(self._fd, len(payload), start) == payload  # type: ignore[arg-type]

    def _undo(self, size: int) -> None:
        try:
            os.ftruncate(self._fd, size)  # type: ignore[arg-type]
            os.fsync(self._fd)  # type: ignore[arg-type]
        except OSError:
            # cannot cut it now: reopen before the next append, which sets the torn tail aside
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- reading -----------------------------------------------------------

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def stat_key(self) -> str:
        """Changes whenever the file does (inode, size, mtime, ctime), even by an edit of the same length."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return ""
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"

    def hash_range(self, hasher, start: int, end: int):
        """Feed bytes [start, end) of the log to `hasher`; None when the log is shorter than `end`."""
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                left = end - start
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        return None
                    hasher.update(chunk)
                    left -= len(chunk)
        except FileNotFoundError:
            return None if end > start else hasher
        return hasher

    def head_signature(self) -> str:
        """The first line, which identifies this log (a replaced file differs)."""
        try:
            with open(self.path, "rb") as f:
                return f.readline(4096).decode("utf-8", "replace").strip()
        except FileNotFoundError:
            return ""

    def replay(self, offset: int = 0, first_line_no: int = 1):
        """Yield (line_no, record, end_offset, error) for whole lines from `offset`.

        A bad line comes back with record None and the reason in `error`; an
        unterminated last line is not read (it is being written, or torn).
        """
        for line_no, rec, pos, err, _raw in self.replay_lines(offset, first_line_no):
            yield line_no, rec, pos, err

    def replay_lines(self, offset: int = 0, first_line_no: int = 1):
        """As `replay`, each with the line's bytes as well."""
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        with f:
            f.seek(offset)
            line_no = first_line_no - 1
            pos = offset
            for raw in f:
                if not raw.endswith(b"\n"):
                    break
                line_no += 1
                pos += len(raw)
                text = raw.strip()
                if not text:
                    yield line_no, None, pos, None, raw
                    continue
                try:
                    rec = json.loads(text.decode("utf-8"))
                    if not isinstance(rec, dict) or rec.get("op") not in ("insert", "expire", "move"):
                        raise ValueError("not a fact record (needs op insert/expire and an integer id)")
                    # a move names two slugs, no fact (docs/architecture.md, "Entity identity")
                    problem = move_problem(rec) if rec["op"] == "move" else id_problem(rec.get("id"))
                    if problem:
                        yield line_no, None, pos, problem, raw
                        continue
                except (ValueError, UnicodeDecodeError) as e:
                    yield line_no, None, pos, str(e)[:160], raw
                    continue
                yield line_no, rec, pos, None, raw
