"""A page as get_page serves it: the file as it is on disk now, read the same way by both pages stores.

The stores find the page's row in their own tables (indexer/pages/store_files.py,
daemon/postgres/pages_files.py); what is served from the file, and when it is
not, is decided here once.
"""

from __future__ import annotations

from pathlib import Path

from ..vault.parse import parse_page
from ..vault.scan import MAX_PAGE_BYTES, page_path, stat_page
from ..vault.timestamps import iso_ns
from ..vault.vault_files import PageWriteError, content_hash, read_bytes
from ..vault.visibility import Viewer
from .page_types import PageFile


def page_on_disk(vault: Path, slug: str, rel: str, indexed_updated_at: str, viewer: Viewer) -> PageFile | None:
    """The page at vault-relative `rel` as it is now; None when the file is gone (or leads outside
    the vault) or was made private to this viewer since it was indexed. PageWriteError when it is
    too large to serve."""
    real = page_path(vault, rel)   # a link swapped to outside since it was indexed
    st = stat_page(vault, rel)
    if st is not None and st.size > MAX_PAGE_BYTES:   # a stub: never read whole into memory
        raise PageWriteError("too_large", f"page {slug!r} is {st.size / 1048576:.1f} MB, over the "
                                          f"{MAX_PAGE_BYTES // 1048576} MB limit get_page serves.",
                             "Open the file itself, or split it into smaller pages.")
    raw = read_bytes(Path(real)) if real is not None else None
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    page = parse_page(rel, text)
    if not viewer.may_see(page.visibility):
        return None   # made private since it was indexed
    return PageFile(slug=slug, title=page.title, type=page.type, content=text, frontmatter=page.frontmatter,
                    hash=content_hash(raw), updated_at=iso_ns(st.mtime_ns) if st else indexed_updated_at)
