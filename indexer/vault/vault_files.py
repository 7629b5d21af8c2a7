"""Page files on disk: the slug grammar for writes, atomic writes, hashes.

A write never leaves a half-written page: the new bytes go to a hidden temp
file in the same folder, are fsync'd, and replace the page in one rename.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path


from .scan import MAX_PAGE_BYTES
from .slugs import path_to_slug

MAX_SLUG_CHARS = 255
# a file name is at most 255 bytes on common file systems, and a page is
# written through a temp file named `.<slug's last segment>.md.XXXXXXXX.tmp`
# beside it (atomic_files): 1 + 3 + 9 + 4 bytes more than the segment
MAX_SEGMENT_BYTES = 255 - len(".") - len(".md") - len(".XXXXXXXX") - len(".tmp")
# the whole path of that temp file must stay under PATH_MAX (4096 on Linux)
MAX_PATH_BYTES = 4095


def _segment_ok(seg: str) -> bool:
    """A slug segment as path_to_slug makes them: letters (with their marks), digits, '_', '-', '.'; no leading dot."""
    if not (seg[0].isalnum() or seg[0] == "_"):
        return False
    return all(ch.isalnum() or ch in "_-." or unicodedata.category(ch)[0] == "M" for ch in seg)


def _suggest(slug: str) -> str:
    segs = (s.lstrip(".-_").rstrip(".") for s in path_to_slug(slug).split("/"))
    return "/".join(s for s in segs if s) or "notes/untitled"


class PageWriteError(Exception):
    """A refused page write. `kind` says why; `fix` says what to do instead."""

    def __init__(self, kind: str, message: str, fix: str, detail: str | None = None):
        super().__init__(message)
        self.kind = kind          # invalid_slug | too_large | changed | ignored | private | read_only | not_indexed
        self.message = message
        self.fix = fix
        self.detail = detail


def content_hash(data: bytes) -> str:
    """The hash put_page's expected_hash is compared with: sha256 of the file's bytes."""
    return hashlib.sha256(data).hexdigest()


def check_slug(slug) -> str:
    """The slug, if it names a page file inside the vault; else PageWriteError."""
    if not isinstance(slug, str) or not slug.strip():
        raise PageWriteError("invalid_slug", "slug is empty.", 'Pass a page slug such as "people/alice-example".')
    if "\\" in slug:
        raise PageWriteError("invalid_slug", f"slug {slug!r} contains a backslash.",
                             "Separate folders with '/', e.g. \"people/alice-example\".")
    if slug.startswith("/") or re.match(r"^[A-Za-z]:", slug):
        raise PageWriteError("invalid_slug", f"slug {slug!r} is an absolute path.",
                             "Pass a path relative to the vault, e.g. \"people/alice-example\".")
    parts = slug.split("/")
    if any(p in ("..", ".") for p in parts):
        raise PageWriteError("invalid_slug", f"slug {slug!r} steps outside its folder ('..' or '.').",
                             "Pass a path inside the vault without '..', e.g. \"people/alice-example\".")
    if any(p == "" for p in parts):
        raise PageWriteError("invalid_slug", f"slug {slug!r} has an empty folder name ('//' or a trailing '/').",
                             "Remove the extra '/', e.g. \"people/alice-example\".")
    if slug.lower().endswith(".md"):
        raise PageWriteError("invalid_slug", f"slug {slug!r} ends in .md.",
                             f"Pass the slug without the extension: \"{slug[:-3]}\".")
    if len(slug) > MAX_SLUG_CHARS:
        raise PageWriteError("invalid_slug", f"slug is {len(slug)} characters; the limit is {MAX_SLUG_CHARS}.",
                             "Use a shorter page name.")
    long = next((p for p in parts if len(p.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES), None)
    if long is not None:
        size = len(long.encode("utf-8", "surrogatepass"))
        raise PageWriteError("invalid_slug", f"slug segment {long[:40]!r}… is {size} bytes in UTF-8; each "
                                             f"segment is limited to {MAX_SEGMENT_BYTES} bytes (a file name's "
                                             "limit, less room for the page's temporary file).",
                             "Use a shorter name for that folder or page, or split it into folders.")
    bad = [p for p in parts if not _segment_ok(p)]
    if bad:
        raise PageWriteError(
            "invalid_slug", f"slug segment {bad[0]!r} is not allowed: each segment starts with a letter, digit "
                            "or '_' and continues with letters, digits, '_', '-' or '.'.",
            f"Try \"{_suggest(slug)}\".")
    canonical = path_to_slug(slug)
    if canonical != slug:
        raise PageWriteError("invalid_slug", f"slug {slug!r} is not in canonical form (lowercase).",
                             f"Use \"{canonical}\"; that is the slug the page would be found by.")
    return slug


def check_path_length(vault: Path, rel: str) -> None:
    """Refuse a page whose temp file's absolute path would pass PATH_MAX; the message names no server path."""
    slug_part = len(rel.encode("utf-8", "surrogatepass"))
    size = len(str(vault).encode("utf-8", "surrogatepass")) + 1 + slug_part + len(".XXXXXXXX.tmp") + 1
    if size > MAX_PATH_BYTES:
        raise PageWriteError("invalid_slug", f"the page's path on the server would be {size} bytes, past the "
                                             f"file system's limit of {MAX_PATH_BYTES}; the slug takes "
                                             f"{slug_part} of them.", "Use a shorter slug (fewer or shorter folders).")


def check_size(data: bytes) -> None:
    if len(data) > MAX_PAGE_BYTES:
        raise PageWriteError("too_large", f"content is {len(data)} bytes; pages are limited to {MAX_PAGE_BYTES} bytes.",
                             "Split the content over several pages.")


def read_bytes(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


