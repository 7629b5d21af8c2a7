"""The order and the bounds of a page's links and of the open tasks that name it.

Both pages stores read in this order (indexer/pages/store.py,
daemon/postgres/pages_store.py), so a card shows the same links and tasks
on either backend.
"""

from __future__ import annotations

from ..vault.visibility import Viewer
from .page_types import LinkEnd, PageLinks

# a card takes at most this many links of each direction before it drops repeats
LINKS_PER_DIRECTION = 60
# what dates an open task elsewhere: its due date (at midnight UTC, as every other date
# reads), else its page's last change; both stores order by this same SQL text
TASK_DATE = "COALESCE(l.due || 'T00:00:00.000Z', p.updated_at)"


class PageLinkReads:
    """A page's links both ways, for a store that answers one direction at a time."""

    def _page_id(self, slug: str, viewer: Viewer) -> int | None:
        raise NotImplementedError

    def _link_ends(self, page_id: int, outgoing: bool, viewer: Viewer) -> list[LinkEnd]:
        """Up to LINKS_PER_DIRECTION resolved links from (outgoing) or into the page whose other end
        is another page the viewer may see, bare-name mentions left out: outgoing in the page's
        order, incoming newest first."""
        raise NotImplementedError

    def links(self, slug: str, viewer: Viewer) -> PageLinks:
        """Resolved links to and from other pages the viewer may see, bare-name mentions left out."""
        pid = self._page_id(slug, viewer)
        if pid is None:
            return PageLinks()
        return PageLinks(self._link_ends(pid, True, viewer), self._link_ends(pid, False, viewer))
