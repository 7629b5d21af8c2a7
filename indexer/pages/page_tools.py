"""Page reads and writes over the index: put_page, get_page, list_pages, backlinks.

A mixin of VaultIndex (it uses the index's reader connection, write lock,
ignore rules and `apply`). Every method takes the `Viewer` it is for: a
viewer who may not see private pages (every remote caller) never sees a
`visibility: private` page, nor writes over one; listings and backlinks are
the pages store's (store.py). Refusals are PageWriteError with the reason
and the fix.
"""

from __future__ import annotations

from pathlib import Path

from ..vault.page_writes import content_bytes, hold_aside, prepare_write, write_page_file
from ..vault.parse import parse_page
from ..vault.vault_files import PageWriteError, check_slug, content_hash, read_bytes
from ..vault.timestamps import iso_ns
from ..vault.scan import MAX_PAGE_BYTES, page_path, stat_page
from ..vault.slugs import path_to_slug
from ..vault.visibility import Viewer
from .store import SqlitePagesStore
from ..page_policy.page_types import Backlink, ListedPage

WORLD = Viewer.world()   # a caller who does not say otherwise is the world (docs/protocol.md §4.8)


class PageOps:
    def put_page(self, slug: str, content: str, expected_hash: str | None = None, *,
                 viewer: Viewer = WORLD) -> dict:
        """Write `<slug>.md` atomically and index it before returning; a writer who may not
        see private pages never writes over one (`_as_if_absent`)."""
        if self.read_only:
            raise PageWriteError("read_only", "another brain process owns this vault's index.",
                                 "Send the request to the running daemon (drop --no-daemon).")
        check_slug(slug)
        data = content_bytes(content)
        with self._lock:
            row = self.db.execute("SELECT path, visibility FROM pages WHERE slug = ?", (slug,)).fetchone()
            ready = prepare_write(self.vault, self.rules, slug, (row["path"], row["visibility"]) if row else None,
                                  data, expected_hash, viewer)
            if isinstance(ready, dict):   # held aside: a blind writer never writes over a private page
                return ready
            rel, real, old = ready
            write_page_file(self.vault, rel, data)
            # the link's target may be a page of its own
            target = Path(real).relative_to(Path(self.vault).resolve()).as_posix()
            self.apply(paths=list(dict.fromkeys([rel, target])))
            indexed = self.tables.by_path(rel)
            if indexed is None:
                why = self.db.execute("SELECT detail FROM problems WHERE path = ? LIMIT 1", (rel,)).fetchone()
                raise PageWriteError("not_indexed", f"{rel} was written but could not be indexed: "
                                                    f"{why[0] if why else 'unknown reason'}.",
                                     "Run `brain doctor` for details.")
        return {"slug": indexed["slug"], "path": rel, "hash": content_hash(data), "created": old is None}

    def _as_if_absent(self, slug: str, rel: str, data: bytes, expected_hash: str | None) -> dict:
        """A remote put_page onto a private page: the answer an absent slug gets.

        Remote callers learn nothing about private pages, not even that one
        exists (docs/protocol.md §4.8), so the private page stays as it is and
        the answer is the one a new page would get. What the caller sent is not
        dropped: it is kept in `<vault>/.brain/held/` for the vault's owner
        (`brain doctor` lists it), so an agent's write is never silently lost.
        """
        return hold_aside(self.vault, slug, rel, data, expected_hash)

    def _page_row(self, slug: str, viewer: Viewer):
        slug = (slug or "").strip()
        row = self.db.execute("SELECT * FROM pages WHERE slug = ?", (slug,)).fetchone()
        if row is None and slug:
            row = self.db.execute("SELECT * FROM pages WHERE slug = ?", (path_to_slug(slug),)).fetchone()
        if row is None or not viewer.may_see(row["visibility"]):
            return None
        return row

    def get_page(self, slug: str, *, viewer: Viewer = WORLD) -> dict | None:
        """The page as it is on disk now, or None (missing, or private to this viewer)."""
        row = self._page_row(slug, viewer)
        if row is None:
            return None
        real = page_path(self.vault, row["path"])  # a link swapped to outside since it was indexed
        st = stat_page(self.vault, row["path"])
        if st is not None and st.size > MAX_PAGE_BYTES:   # a stub: never read whole into memory
            raise PageWriteError("too_large", f"page {row['slug']!r} is {st.size / 1048576:.1f} MB, over the "
                                              f"{MAX_PAGE_BYTES // 1048576} MB limit get_page serves.",
                                 "Open the file itself, or split it into smaller pages.")
        raw = read_bytes(real) if real is not None else None
        if raw is None:
            return None
        text = raw.decode("utf-8", "replace")
        page = parse_page(row["path"], text)
        if not viewer.may_see(page.visibility):
            return None  # made private since it was indexed
        return {"slug": row["slug"], "title": page.title, "type": page.type, "content": text,
                "frontmatter": page.frontmatter, "hash": content_hash(raw),
                "updated_at": iso_ns(st.mtime_ns) if st else row["updated_at"]}

    def list_pages(self, prefix: str | None = None, limit: int = 50, *, viewer: Viewer = WORLD) -> list[ListedPage]:
        """Pages under a slug prefix, most recently updated first."""
        return SqlitePagesStore(self.db).list_pages(prefix, limit, viewer)

    def backlinks(self, slug: str, *, viewer: Viewer = WORLD) -> list[Backlink] | None:
        """Pages linking to a page (None when the page is unknown to this viewer)."""
        return SqlitePagesStore(self.db).backlinks(slug, viewer)
