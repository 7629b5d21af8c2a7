"""Walking the vault: which files are pages, and why the others are not.

Pages are `*.md` files outside dot-folders, outside `.brainignore` patterns,
and not sync-conflict copies. Conflict copies, symlink loops, binary or
oversized files come back as problems (shown by `brain doctor`), never as
exceptions: one bad file must not stop an index.

Symlinks (README "Symlinks"): a link whose real target stays inside the
vault's real path, outside its dot-folders, is followed; any other is never
followed, read or indexed, and is reported as `symlink_outside`.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat as _stat
from dataclasses import dataclass, field
from pathlib import Path

from .atomic_files import TEMP_NAME, real_inside

MAX_PAGE_BYTES = 4 * 1024 * 1024   # a bigger .md is almost surely an export or a dump
IGNORE_FILE = ".brainignore"
CONFLICT_FIX = "a sync-conflict copy; merge it into the original page and delete it"

# Dropbox "x (conflicted copy 2026-01-02).md", "x (Alice's conflicted copy …)",
# Syncthing "x.sync-conflict-20260102-101010-ABCDEFG.md", Nextcloud "x (conflict …)"
_CONFLICT = re.compile(r"\((?:[^()]*\s)?conflicted copy\b[^()]*\)|\.sync-conflict-|\s\(conflict[\s)]", re.IGNORECASE)


@dataclass(slots=True)
class FileStat:
    rel: str        # vault-relative, '/'-separated
    mtime_ns: int
    size: int


@dataclass(slots=True)
class Problem:
    path: str
    kind: str       # conflict_copy | symlink_loop | symlink_outside | binary | invalid_utf8 | too_large | ...
    detail: str


@dataclass
class ScanResult:
    files: dict[str, FileStat] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)   # brain's own leftover temp files (TEMP_NAME)


def is_markdown(name: str) -> bool:
    return name.lower().endswith(".md")


def is_conflict_copy(name: str) -> bool:
    return bool(_CONFLICT.search(name))


class IgnoreRules:
    """`.brainignore`: gitignore-style patterns (`#` comments, `!` negation, trailing `/` = folder)."""

    def __init__(self, lines: list[str] | None = None):
        self.rules: list[tuple[bool, bool, bool, str]] = []   # (negate, dir_only, anchored, pattern)
        for raw in lines or []:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = line.startswith("/") or "/" in line.rstrip("/")
            line = line.lstrip("/")
            if line.startswith("**/"):
                anchored, line = False, line[3:]
            if line:
                self.rules.append((negate, dir_only, anchored, line))

    @classmethod
    def load(cls, vault: Path) -> "IgnoreRules":
        try:
            return cls((Path(vault) / IGNORE_FILE).read_text(encoding="utf-8-sig", errors="replace").splitlines())
        except OSError:
            return cls()

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether a path (or any folder above it) is ignored."""
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            if self._match("/".join(parts[:i]), is_dir or i < len(parts)):
                return True
        return False

    def _match(self, rel: str, is_dir: bool) -> bool:
        result = False
        name = rel.rsplit("/", 1)[-1]
        for negate, dir_only, anchored, pat in self.rules:
            if dir_only and not is_dir:
                continue
            hit = _path_glob(pat).match(rel) is not None if anchored else fnmatch.fnmatchcase(name, pat)
            if hit:
                result = not negate
        return result


@functools.lru_cache(maxsize=256)
def _path_glob(pat: str) -> "re.Pattern[str]":
    """A gitignore path pattern as a regex: `*` and `?` stay within one folder, `**` crosses them."""
    out, i = [], 0
    while i < len(pat):
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        elif pat[i] == "[" and "]" in pat[i + 2:]:
            j = pat.index("]", i + 2)
            body = pat[i + 1:j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error:  # a malformed class such as `[z-a]`: match the text literally rather than fail the scan
        return re.compile(re.escape(pat) + r"\Z")


def hidden(rel: str) -> bool:
    """Dot-folders (.obsidian, .git, .trash, .brain) and dot-files are never pages."""
    return any(part.startswith(".") for part in rel.split("/"))


def classify(rel: str, rules: IgnoreRules) -> str:
    """'page', 'conflict' or 'ignored' for a vault-relative file path."""
    if not is_markdown(rel) or hidden(rel):
        return "ignored"
    if rules.ignored(rel, False):
        return "ignored"
    if is_conflict_copy(rel.rsplit("/", 1)[-1]):
        return "conflict"
    return "page"


def scan_vault(vault: Path, under: str = "", rules: IgnoreRules | None = None) -> ScanResult:
    """Every page file in the vault (or under one folder of it), with problems found on the way."""
    vault = Path(vault)
    rules = rules or IgnoreRules.load(vault)
    result = ScanResult()
    start = vault / under if under else vault
    base = os.path.realpath(vault)
    if _pages_real_path(base, start) is None:
        return result
    try:
        st = os.stat(start)
    except OSError:
        return result
    visited = {(st.st_dev, st.st_ino)}
    _walk(str(start), under.strip("/"), rules, result, visited, ((st.st_dev, st.st_ino),), base)
    return result


def _link_outside(rel: str, target: str) -> Problem:
    return Problem(rel, "symlink_outside", f"a symlink to {target}, outside the vault's pages (elsewhere, or in "
                                           "a dot-folder); not followed (move those notes into the vault, or link "
                                           "from there to here instead)")


def _pages_real_path(base: str, path) -> str | None:
    """The real path of `path` when it lies inside the vault's real path `base` and outside its dot-folders."""
    real = real_inside(base, path)
    if real is None or (real != base and hidden(os.path.relpath(real, base).replace(os.sep, "/"))):
        return None
    return real


def _walk(abs_dir: str, rel_dir: str, rules: IgnoreRules, out: ScanResult, visited: set, ancestors: tuple,
          base: str) -> None:
    try:
        entries = list(os.scandir(abs_dir))
    except OSError as e:
        out.problems.append(Problem(rel_dir or ".", "unreadable_folder", f"folder could not be listed: {e.strerror or e}"))
        return
    for entry in entries:
        name = entry.name
        rel = f"{rel_dir}/{name}" if rel_dir else name
        if name.startswith("."):
            if TEMP_NAME.match(name) and entry.is_file(follow_symlinks=False):
                out.temp_files.append(rel)
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            is_dir = False
        # the folder we are in is inside the vault: only a link can lead out
        target = os.path.realpath(entry.path) if entry.is_symlink() else None
        outside = target if target is not None and _pages_real_path(base, target) is None else None
        if is_dir:
            if rules.ignored(rel, True):
                continue
            if outside is not None:
                out.problems.append(_link_outside(rel, outside))
                continue
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError as e:
                out.problems.append(Problem(rel, "unreadable_folder", f"folder could not be read: {e.strerror or e}"))
                continue
            key = (st.st_dev, st.st_ino)
            if key in ancestors:
                out.problems.append(Problem(rel, "symlink_loop", "this symlink points at a folder above it; not followed"))
                continue
            if key in visited:
                continue  # the same folder reached twice through a symlink: index it once
            visited.add(key)
            _walk(entry.path, rel, rules, out, visited, ancestors + (key,), base)
            continue
        if not is_markdown(name):
            continue
        kind = classify(rel, rules)
        if kind == "ignored":
            continue
        if kind == "conflict":
            out.problems.append(Problem(rel, "conflict_copy", CONFLICT_FIX))
            continue
        if outside is not None:
            out.problems.append(_link_outside(rel, outside))
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError as e:
            kind = "symlink_loop" if getattr(e, "errno", None) == 40 else "unreadable"
            out.problems.append(Problem(rel, kind, f"could not be read: {e.strerror or e}"))
            continue
        if not _stat.S_ISREG(st.st_mode):
            continue
        out.files[rel] = FileStat(rel, st.st_mtime_ns, st.st_size)


def page_path(vault: Path, rel: str) -> str | None:
    """The real path of a page file, or None when it (or a folder on its way) leads outside the vault's pages."""
    return _pages_real_path(os.path.realpath(vault), Path(vault) / rel)


def outside_link(vault: Path, rel: str) -> Problem | None:
    """The `symlink_outside` problem of a path that leads out of the vault, else None."""
    if page_path(vault, rel) is not None:
        return None
    return _link_outside(rel, os.path.realpath(Path(vault) / rel))


def stat_page(vault: Path, rel: str) -> FileStat | None:
    """The current stat of one page file, or None when it is gone, not a file, or outside the vault."""
    real = page_path(vault, rel)
    if real is None:
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    if not _stat.S_ISREG(st.st_mode):
        return None
    return FileStat(rel, st.st_mtime_ns, st.st_size)


def read_page(vault: Path, rel: str, size_hint: int | None = None) -> tuple[bytes | None, str | None, Problem | None]:
    """(raw bytes, text, problem). Text is None when the file is skipped.

    Invalid UTF-8 is indexed with replacement characters and reported;
    binary content (NUL bytes) and oversized files are skipped and reported.
    """
    path = page_path(vault, rel)
    if path is None:
        return None, None, outside_link(vault, rel)
    if size_hint is not None and size_hint > MAX_PAGE_BYTES:
        return None, None, _too_large(rel, size_hint)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_PAGE_BYTES + 1)
    except FileNotFoundError:
        return None, None, None  # deleted between the event and the read
    except OSError as e:
        kind = "symlink_loop" if e.errno == 40 else "unreadable"
        return None, None, Problem(rel, kind, f"could not be read: {e.strerror or e}")
    if len(raw) > MAX_PAGE_BYTES:
        return None, None, _too_large(rel, len(raw))
    if b"\x00" in raw[:8192]:
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):   # Windows "Unicode": text, but NUL-laden
            return raw, None, Problem(rel, "binary", "UTF-16 text, which is not indexed; re-save the file as UTF-8")
        return raw, None, Problem(rel, "binary", "not text (contains NUL bytes); rename it or add it to .brainignore")
    try:
        return raw, raw.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return raw, raw.decode("utf-8", "replace"), Problem(
            rel, "invalid_utf8",
            f"not valid UTF-8 at byte {e.start}; indexed with replacement characters — re-save the file as UTF-8")


def _too_large(rel: str, size: int) -> Problem:
    return Problem(rel, "too_large", f"{size / 1048576:.1f} MB is over the {MAX_PAGE_BYTES // 1048576} MB page limit; "
                                     "indexed as a stub (its name and frontmatter, not its text) — split the page "
                                     "or add it to .brainignore")


def read_head(vault: Path, rel: str, limit: int) -> bytes | None:
    """The first `limit` bytes of a page file, or None when it is gone, unreadable or leads outside the vault."""
    path = page_path(vault, rel)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return None
