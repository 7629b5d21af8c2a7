"""A page file written into the vault: every check before it, the atomic write, the blind write held aside.

Both page backends write page files through these (indexer/pages/page_tools.py,
daemon/postgres/pages_files.py) and then index what they wrote, so the vault
stays the source of truth. A writer who may not see private pages (every
remote caller) never writes over one: what it sent is kept aside (README,
"Private pages"). Refusals are PageWriteError with the reason and the fix.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import time
from pathlib import Path

from .atomic_files import ANY, ChangedMeanwhile, write_atomic
from .brain_folder import BrainFolderError, brain_folder
from .frontmatter import page_visibility, split_frontmatter
from .scan import IGNORE_FILE, MAX_PAGE_BYTES, classify, page_path, stat_page
from .vault_files import PageWriteError, check_path_length, check_size, content_hash, read_bytes
from .visibility import Viewer

log = logging.getLogger("brain.pages")

# where a remote put_page onto a private page keeps what it was sent (README,
# "Private pages"): inside the vault's own `.brain`, never indexed, 0600
HELD_DIR = Path(".brain") / "held"


def stale_write(slug: str, current: str | None) -> PageWriteError:
    """The refusal of a write whose expected_hash no longer matches (current None: no such page)."""
    what = "was deleted" if current is None else "changed"
    return PageWriteError(
        "changed", f"page {slug!r} {what} since it was read (expected_hash does not match).",
        "Call get_page again, merge your edit into the current content, and retry with its hash.",
        detail=f"current hash: {current}" if current else None)


def prepare_write(vault: Path, rules, slug: str, indexed: tuple[str, str] | None, data: bytes,
                  expected_hash: str | None, viewer: Viewer) -> "dict | tuple[str, str, bytes | None]":
    """Every check before a page file is written: (vault-relative file, its real path, its bytes now),
    or the answer for a blind write kept aside (a dict). `indexed`: the slug's (path, visibility)
    in the page tables, if any. PageWriteError names a refusal and its fix."""
    blind = not viewer.sees_private   # a writer who may not see private pages
    rel = indexed[0] if indexed else f"{slug}.md"
    check_path_length(vault, rel)
    kind = classify(rel, rules)
    if kind == "conflict":
        raise PageWriteError("ignored", f"{rel} is named like a sync-conflict copy, which is never indexed.",
                             "Choose a slug without 'sync-conflict' or 'conflicted copy' in it.")
    if kind != "page":
        raise PageWriteError("ignored", f"{rel} is excluded from the index by {IGNORE_FILE}.",
                             f"Write the page under another folder, or edit {IGNORE_FILE}.")
    if indexed is not None and not viewer.may_see(indexed[1]):
        return hold_aside(vault, slug, rel, data, expected_hash)
    # README "Symlinks": never through a link to outside the vault; a link
    # inside it is written at its target and stays a link
    real = page_path(vault, rel)
    if real is None:
        raise PageWriteError("invalid_slug", f"{rel} leads outside the vault's pages through a "
                                             "symlink; brain never writes there.",
                             "Choose a slug whose folders are real folders inside the vault.")
    big = stat_page(vault, rel)
    if blind and big is not None and big.size > MAX_PAGE_BYTES:   # private to them, and never read whole
        return hold_aside(vault, slug, rel, data, expected_hash)
    try:
        old = read_bytes(Path(real))
    except OSError as e:
        if blind:
            return hold_aside(vault, slug, rel, data, expected_hash)
        raise PageWriteError("unreadable", f"{rel} cannot be read: {e.strerror or e}.",
                             "Fix the file's permissions, then retry.") from None
    # the index may not hold the file yet (just created, too large,
    # binary): the file on disk decides (docs/architecture.md "Private pages")
    if blind and old is not None and not world_writable(old):
        return hold_aside(vault, slug, rel, data, expected_hash)
    current = content_hash(old) if old is not None else None
    if expected_hash is not None and current != expected_hash.strip().lower():
        raise stale_write(slug, current)
    return rel, real, old


def content_bytes(content: object) -> bytes:
    """put_page's content as the bytes to write; PageWriteError names what is wrong with it and the fix."""
    if not isinstance(content, str):
        raise PageWriteError("invalid_content", "content must be a string.", "Pass the whole Markdown document.")
    if "\x00" in content:  # the indexer takes a NUL-laden file for binary and skips it
        raise PageWriteError("invalid_content", "content contains NUL characters; the page could not be indexed.",
                             "Remove the NUL (\\u0000) characters from the content and retry.")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate ("\ud800") has no UTF-8 form
        raise PageWriteError("invalid_content", f"content has an unpaired surrogate at character {e.start}.",
                             "Send the text as valid Unicode (pair or drop the \\ud800-\\udfff escape).") from None
    check_size(data)
    return data


def write_if_unchanged(vault: Path, slug: str, rel: str, data: bytes, old: bytes | None,
                       viewer: Viewer) -> dict[str, object] | None:
    """Write the page file only if it still holds `old` (None: still absent), checked right before the
    rename; None once written. Changed meanwhile (the owner saved it while the caller's write was on
    its way), the write is refused as a stale `expected_hash` is, or, when what is there now is private
    to the writer, kept aside and answered as for an absent slug (docs/protocol.md §4.8)."""
    try:
        write_page_file(vault, rel, data, expect=old)
        return None
    except ChangedMeanwhile:
        now = read_bytes(vault / rel)
    if not viewer.sees_private and now is not None and not world_writable(now):
        return hold_aside(vault, slug, rel, data, None)
    raise stale_write(slug, content_hash(now) if now is not None else None)


def write_page_file(vault: Path, rel: str, data: bytes, expect=ANY) -> None:
    """Write a page file atomically inside the vault; PageWriteError (never a server path) when refused."""
    path = vault / rel
    try:
        write_atomic(path, data, within=vault, expect=expect)
    except PermissionError as e:  # the link changed since the caller's checks
        raise PageWriteError("invalid_slug", f"{rel} cannot be written: {e.strerror or e}.",
                             "Choose a slug whose folders are real folders inside the vault.") from None
    except (IsADirectoryError, NotADirectoryError, FileExistsError) as e:
        # a folder named like the page file, or a file named like one of its folders
        raise PageWriteError("invalid_slug", f"{rel} cannot be written: {e.strerror or e} "
                                             f"({_in_vault(vault, e.filename or path)}).",
                             "Rename the file or folder that is in the way, or choose another slug.") from None
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise
        # a file system with shorter limits than the checks assume: say so without server paths
        raise PageWriteError("invalid_slug", f"the file system refused the page's name as too long "
                                             f"({len(rel.encode())} bytes for {rel!r}).",
                             "Use a shorter slug (fewer or shorter folders).") from None


def hold_aside(vault: Path, slug: str, rel: str, data: bytes, expected_hash: str | None) -> dict:
    """Keep a blind write onto a private page in `<vault>/.brain/held/` and answer as for an absent slug
    (PageOps._as_if_absent, indexer/pages/page_tools.py, says why)."""
    if expected_hash is not None:
        raise stale_write(slug, None)
    stamp = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{time.time_ns() % 10**9:09d}"
    held = vault / HELD_DIR / _held_name(stamp, slug)
    try:
        # never through a `.brain` swapped for a link to elsewhere (brain_folder.py)
        within = brain_folder(vault)
        held.parent.mkdir(mode=0o700, exist_ok=True)
        write_atomic(held, data, mode=0o600, within=within)
        log.warning("a remote put_page onto the private page %s was kept in %s, not written over it", rel, held)
    except (OSError, BrainFolderError) as e:
        log.error("a remote put_page onto the private page %s could not be kept aside: %s", rel, e)
    return {"slug": slug, "path": rel, "hash": content_hash(data), "created": True}


def world_writable(raw: bytes) -> bool:
    """Whether a remote caller may overwrite a page file with these bytes.

    Only a page that reads as world-visible: an oversized or binary file, or
    one whose frontmatter does not clearly say world, is private to them.
    """
    if len(raw) > MAX_PAGE_BYTES or b"\x00" in raw[:8192]:
        return False
    return page_visibility(split_frontmatter(raw.decode("utf-8", "replace")))[0] == "world"


def _in_vault(vault: Path, where) -> str:
    """A path as the vault-relative name a remote caller may see (never the server's absolute path)."""
    try:
        return Path(where).resolve().relative_to(Path(vault).resolve()).as_posix()
    except (ValueError, OSError):
        return Path(where).name


def _held_name(stamp: str, slug: str) -> str:
    """`<stamp>-<slug, / as __>.md`, shortened with a hash of the slug when a
    deep slug would pass the file-name limit (255 bytes), so the write is kept."""
    flat = slug.replace("/", "__")
    if len(f"{stamp}-{flat}.md".encode()) <= 200:
        return f"{stamp}-{flat}.md"
    digest = hashlib.sha256(slug.encode()).hexdigest()[:16]
    tail = flat.encode()[-120:].decode("utf-8", "ignore")
    return f"{stamp}-{digest}-{tail}.md"
