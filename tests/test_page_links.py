"""A page's links both ways, alike on both pages stores (indexer/page_policy/page_order.py).

Over the same real vault, the embedded store and the PostgreSQL one (on a
real server, skipped only without the `postgres` extra) give a page's
outgoing links in the page's order and its incoming ones, never a link to
itself, and never a link whose other end is a page the viewer may not see.
"""

from __future__ import annotations

from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)
from page_stores import both_page_stores

PAGES = {
    "notes/hub.md": "# Hub\n\nFirst [[Zeta]], then [[Alpha]], and [[Hub]] itself.\n",
    "notes/zeta.md": "# Zeta\n\nBack to [[Hub]].\n",
    "notes/alpha.md": "# Alpha\n\nNothing here.\n",
    "notes/secret.md": "---\nvisibility: private\n---\n# Secret\n\nSee [[Hub]].\n",
}


def write_vault(vault) -> None:
    for rel, text in PAGES.items():
        write(vault, rel, text)


pages = both_page_stores(write_vault)


def test_links_go_out_in_page_order_and_come_in_from_pages_the_viewer_may_see(pages):
    from brain.indexer.vault.visibility import Viewer

    world = pages.links("notes/hub", Viewer.world())
    assert [e.slug for e in world.outgoing] == ["notes/zeta", "notes/alpha"]   # not the link to itself
    assert [e.slug for e in world.incoming] == ["notes/zeta"]                  # not the private page's
    owner = pages.links("notes/hub", Viewer.owner())
    assert sorted(e.slug for e in owner.incoming) == ["notes/secret", "notes/zeta"]
    assert pages.links("notes/secret", Viewer.world()).outgoing == []
