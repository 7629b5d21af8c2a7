"""Which page a typed name means, on both pages stores (indexer/page_policy/name_ranking.py).

One ranking, two backends answering its lookups: over the same real vault the
embedded store and the PostgreSQL one (on a real server, skipped only without
the `postgres` extra) give the same candidates in the same order, rank by
rank (alias, exact title or slug, slug tail, a first name's people/companies
pages), and the same one page for remember's entity, or none when a name is
ambiguous. A private page never resolves for the world.
"""

from __future__ import annotations

import os

from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)
from page_stores import both_page_stores

PAGES = {
    "people/alice-example.md": "---\ntitle: Alice Example\naliases: [Ally]\n---\n# Alice Example\n\nRows.\n",
    "companies/alice-works.md": "# Alice Works\n\nA shipyard.\n",
    "notes/ally.md": "# Ally\n\nA note whose slug tail is an alias of someone else.\n",
    "projects/harbor.md": "# Harbor Project\n\nThe harbour project.\n",
    "archive/harbor.md": "# Old Harbor\n\nThe first one.\n",
    "people/bob-secret.md": "---\ntitle: Bob Secret\nvisibility: private\naliases: [Bobby]\n---\n# Bob Secret\n",
}


def write_vault(vault) -> None:
    for i, (rel, text) in enumerate(PAGES.items()):
        write(vault, rel, text)
        t = 1_700_000_000 + i * 100   # later pages are fresher: the tie-break within a rank
        os.utime(vault / rel, (t, t))


pages = both_page_stores(write_vault)


def slugs(heads):
    return [h.slug for h in heads]


def test_candidates_come_rank_by_rank_then_freshest_first(pages):
    from brain.indexer.vault.visibility import Viewer

    owner = Viewer.owner()
    # alias (people/alice-example) before the exact title and slug tail of notes/ally
    assert slugs(pages.resolve_name("Ally", owner)) == ["people/alice-example", "notes/ally"]
    # two pages share the tail: the fresher (written later) first
    assert slugs(pages.resolve_name("harbor", owner)) == ["archive/harbor", "projects/harbor"]
    # the exact title outranks a tail
    assert slugs(pages.resolve_name("Old Harbor", owner)) == ["archive/harbor"]
    # a first name: the people/ and companies/ pages whose slug starts with it, freshest first
    assert slugs(pages.resolve_name("alice", owner)) == ["companies/alice-works", "people/alice-example"]
    assert pages.resolve_name("   ", owner) == []


def test_an_entity_is_one_page_or_none(pages):
    from brain.indexer.vault.visibility import Viewer

    owner, world = Viewer.owner(), Viewer.world()
    assert pages.resolve_entity("people/alice-example", owner) == "people/alice-example"
    assert pages.resolve_entity("Ally", owner) == "people/alice-example"    # a unique alias
    assert pages.resolve_entity("alice", owner) is None                     # two people/companies pages
    assert pages.resolve_entity("harbor", owner) is None                    # two tails
    assert pages.resolve_entity("Old Harbor", owner) == "archive/harbor"    # a unique title
    assert pages.resolve_entity("alice-works", owner) == "companies/alice-works"   # a unique tail
    assert pages.resolve_entity("bob", owner) == "people/bob-secret"
    assert pages.resolve_entity("bob", world) is None                       # private: never for the world
    assert pages.resolve_entity("Bobby", world) is None
    assert pages.resolve_alias("Bobby", owner) == ["people/bob-secret"]
    assert pages.resolve_name("Bob Secret", world) == []
