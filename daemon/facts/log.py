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

from ...indexer.vault.brain_folder import open_no_follow
from .homes import move_problem
from .ids import id_problem
from ..private_files import FILE_MODE, private_dir

log = logging.getLogger("brain.facts")


class FactsLog:
    def __init__(self, path: Path, root: Path | None = None):
        """`root`: the folder below which no link is followed for a write (the vault's; by default the
        log's own folder). docs/architecture.md "Symlinks"."""
        self.path = Path(path)
        self._root = Path(root) if root is not None else None
        self._fd: int | None = None
        self.set_aside: list[bytes] = []  # torn tails this writer moved aside (their ids stay claimed)

    # -- writing -----------------------------------------------------------

    def _open(self, rel: str, flags: int, folder_mode: int | None = 0o700) -> int:
        """Open a file beside the log, through real folders only (LinkRefusedError on a link)."""
        if self._root is None:
            private_dir(self.path.parent)
            return open_no_follow(self.path.parent, rel, flags, FILE_MODE, folder_mode)
        if flags & os.O_CREAT and not self._root.exists():
            private_dir(self._root)   # a store made before its vault folder (as before: nothing to follow yet)
        return open_no_follow(self._root, str(self.path.parent.relative_to(self._root) / rel), flags, FILE_MODE,
                              folder_mode)

    def open_for_append(self) -> None:
        """Prepare to append: make the file (its name synced), set aside a torn tail; never through a link."""
        fd = self._open(self.path.name, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            self._repair_torn_tail(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def held_is_current(self) -> bool:
        """Whether the open descriptor is the file now at the path, reached through real folders only
        (not one renamed over, deleted, or moved out of the vault and linked back)."""
        if self._fd is None:
            return False
        try:
            fd = self._open(self.path.name, os.O_RDONLY, folder_mode=None)
        except (FileNotFoundError, NotADirectoryError, RuntimeError):   # gone, or a link in the way
            return False
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
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
        try:
            fd = self._open(self.path.name, os.O_RDWR)
        except FileNotFoundError:
            return
        try:
            self._repair_torn_tail(fd)
        finally:
            os.close(fd)

    def _repair_torn_tail(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size == 0:
            return
        with os.fdopen(os.dup(fd), "rb+") as f:
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
            if parse_line(tail)[0] is not None:
                # a whole record without its newline (already read as a fact): end its line, so the
                # next record starts one of its own
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
                return
            aside, out_fd = self._new_aside(start)
            # the copy is on disk (its name synced) before the log is cut, so a crash in between loses nothing
            with os.fdopen(out_fd, "wb") as out:
                out.write(tail)
                out.flush()
                os.fsync(out.fileno())
            f.truncate(start)
            f.flush()
            os.fsync(f.fileno())
        self.set_aside.append(tail)
        log.warning("facts log ended in a torn line (%d bytes, never acknowledged); kept it in %s", len(tail), aside)

    def _new_aside(self, start: int) -> tuple[Path, int]:
        """A new file for a torn tail set aside at `start` (a second tear there keeps the first one too)."""
        n = 0
        while True:
            aside = self.path.name + f".torn-{start}" + (f".{n}" if n else "")
            try:
                return self.path.with_name(aside), self._open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                n += 1

    def _opened(self) -> int:
        """The descriptor appends go to, opened now (open_for_append raises when it cannot)."""
        self.open_for_append()
        assert self._fd is not None
        return self._fd

    def append(self, records: list[dict], before: Sequence[bytes] = ()) -> tuple[int, bytes]:
        """Append records (after the whole lines `before`, copied as they are) durably;
        returns where they start and the bytes written."""
        fd = self._fd if self._fd is not None else self._opened()
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
        payload = b"".join(line + b"\n" for line in before) + data.encode("utf-8")
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(payload):
                written += os.write(fd, payload[written:])
            os.fsync(fd)
        except BaseException:
            # not acknowledged, so not kept: a partial line left behind would
            # swallow the next record appended after it
            self._undo(start)
            raise
        # with O_APPEND the bytes went to the end as it was then, which another writer may have moved
        return os.fstat(fd).st_size - len(payload), payload

    def landed(self, start: int, payload: bytes) -> bool:
        """Whether `payload` is a run of whole lines at `start` of the file now at the path."""
        fd = self._fd
        if fd is None or not self.held_is_current() or start < 0:
            return False
        before = os.pread(fd, 1, start - 1) if start else b"\n"
        return before == b"\n" and os.pread(fd, len(payload), start) == payload

    def _undo(self, size: int) -> None:
        try:
            if self._fd is None:
                return
            os.ftruncate(self._fd, size)
            os.fsync(self._fd)
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

    def continued_at(self, offset: int) -> bool:
        """Whether a last line read whole before its newline came (`offset` just after it) was since
        continued by more than a newline: then it is no record, and what was read from it must go."""
        if offset <= 0:
            return False
        try:
            with open(self.path, "rb") as f:
                if os.pread(f.fileno(), 1, offset - 1) == b"\n":
                    return False
                after = os.pread(f.fileno(), 4096, offset)
        except FileNotFoundError:
            return False
        return bool(after.split(b"\n", 1)[0].strip())

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
            resumed = offset > 0 and os.pread(f.fileno(), 1, offset - 1) not in (b"\n", b"")
            f.seek(offset)
            line_no = first_line_no - 1
            pos = offset
            for raw in f:
                if resumed:
                    # the rest of a last line read whole before its newline came: not a line of its own
                    resumed = False
                    if not raw.endswith(b"\n"):
                        break
                    pos += len(raw)
                    glued = "bytes glued after a whole record on its line" if raw.strip() else None
                    yield line_no, None, pos, glued, raw
                    continue
                if not raw.endswith(b"\n"):
                    # an unterminated last line: a whole record is read (another program wrote it without
                    # its newline); anything less is being written, or torn, and waits
                    rec, err = parse_line(raw)
                    if rec is not None:
                        yield line_no + 1, rec, pos + len(raw), None, raw
                    break
                line_no += 1
                pos += len(raw)
                if not raw.strip():
                    yield line_no, None, pos, None, raw
                    continue
                rec, err = parse_line(raw)
                yield line_no, rec, pos, err, raw


def parse_line(raw: bytes) -> tuple[dict | None, str | None]:
    """(the record, None) for a line holding one fact record, else (None, why)."""
    try:
        rec = json.loads(raw.strip().decode("utf-8"))
        if not isinstance(rec, dict) or rec.get("op") not in ("insert", "expire", "move"):
            raise ValueError("not a fact record (needs op insert/expire and an integer id)")
    except (ValueError, UnicodeDecodeError) as e:
        return None, str(e)[:160]
    # a move names two slugs, no fact (docs/architecture.md, "Entity identity")
    problem = move_problem(rec) if rec["op"] == "move" else id_problem(rec.get("id"))
    return (None, problem) if problem else (rec, None)
