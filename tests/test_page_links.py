"""A page's links both ways, alike on both pages stores (indexer/page_policy/page_order.py).

Over the same real vault, the embedded store and the PostgreSQL one (on a
real server, skipped only without the `postgres` extra) give a page's
outgoing links in the page's order and its incoming ones, never a link to
itself, and never a link whose other end is a page the viewer may not see.
"""

from __future__ import annotations

import pytest

from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)
from pg_fixtures import pg_pages_store

PAGES = {
    "notes/hub.md": "# Hub\n\nFirst [[Zeta]], then [[Alpha]], and [[Hub]] itself.\n",
    "notes/zeta.md": "# Zeta\n\nBack to [[Hub]].\n",
    "notes/alpha.md": "# Alpha\n\nNothing here.\n",
    "notes/secret.md": "---\nvisibility: private\n---\n# Secret\n\nSee [[Hub]].\n",
}


def embedded(vault, open_index, request):
    return open_index(vault).pages


def postgres(vault, open_index, request):
    pages = pg_pages_store(vault, request.getfixturevalue("pg_dsn"))   # skips without the postgres extra
    request.addfinalizer(pages.close)
    return pages


@pytest.fixture(params=[embedded, postgres], ids=["embedded", "postgres"])
def pages(vault, open_index, request):
    for rel, text in PAGES.items():
        write(vault, rel, text)
    return request.param(vault, open_index, request)


def test_links_go_out_in_page_order_and_come_in_from_pages_the_viewer_may_see(pages):
    from brain.indexer.vault.visibility import Viewer

    world = pages.links("notes/hub", Viewer.world())
    assert [e.slug for e in world.outgoing] == ["notes/zeta", "notes/alpha"]   # not the link to itself
    assert [e.slug for e in world.incoming] == ["notes/zeta"]                  # not the private page's
    owner = pages.links("notes/hub", Viewer.owner())
    assert sorted(e.slug for e in owner.incoming) == ["notes/secret", "notes/zeta"]
    assert pages.links("notes/secret", Viewer.world()).outgoing == []
