"""The pages store applies visibility itself: no read method hands a private page to the world.

Every public method of the `PagesStore` contract is called with
`Viewer.world()`, on each backend (the embedded SQLite store, and the
PostgreSQL one on a real server, skipped only without the `postgres` extra),
over a real vault (real files, the real indexer) holding a
private page and a page whose frontmatter cannot be parsed (private too:
privacy fails closed), both linked to and from public pages, with aliases,
timeline entries, tags and chunks. Whatever comes back is walked to the
leaves; no private slug, title, alias, body, timeline text, tag or chunk
hash may be among them. A method added to the contract without an entry in
the argument table fails the test (docs/architecture.md, "Stores").
"""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)
from pg_fixtures import pg_pages_store

SECRET = """---
title: Quasar Veil
visibility: private
aliases: [Quux Shadow]
tags: [tagprivmark]
---
# Quasar Veil

PRIVMARK-ALPHA lives here. Knows [[Alice Example]].

colleague:: [[Acme Robotics]]

- [ ] PRIVMARK-TASK follow up with [[Alice Example]]

## Timeline
- **2026-11-01** | notes — PRIVMARK-EVENT happened
"""

BROKEN = """---
title: [Brokenfront Marker
aliases: [Brokenalias
---
# Brokenfront Marker

PRIVMARK-BETA is written here. Works with [[Alice Example]].

employer:: [[Acme Robotics]]

> [!todo]
> - [ ] PRIVMARK-BETA-TASK call [[Acme Robotics]]
"""

ALICE = """---
title: Alice Example
aliases: [Ally]
tags: [sailing]
---
# Alice Example

Alice runs the boat club. employer:: [[Acme Robotics]]

friend:: [[people/zorblax-hidden]]
mentor:: [[notes/broken-secret]]

- [ ] ask [[people/zorblax-hidden]] about the lake

## Timeline
- **2026-10-01** | chat — Agreed to crew
"""

ACME = """---
title: Acme Robotics
summary: Makes robots.
---
Acme builds robots. [[Alice Example]] works here. [[zorblax-hidden]] too.
"""

PRIVATE_SLUGS = ["people/zorblax-hidden", "notes/broken-secret"]
PUBLIC_SLUGS = ["people/alice-example", "companies/acme-robotics"]
# text only the private pages hold; a public page may name a private one by its slug (that is how
# it links there), so slugs, paths and titles are leaks only as whole values (`exact_leaks`)
MARKERS = ["quasar", "quux", "tagprivmark", "privmark", "brokenfront"]
FAR_FUTURE = "9999-12-31T00:00:00.000Z"

# what each read is asked: the private pages' own names wherever a method takes one
# (a leak is a private page resolving), and the public pages that link to them
READS: dict[str, list[tuple]] = {
    "resolve_name": [("Quasar Veil",), ("zorblax",), ("Quux Shadow",), ("people/zorblax-hidden",),
                     ("broken-secret",), ("Brokenfront Marker",), ("Alice Example",)],
    "resolve_alias": [("Quux Shadow",), ("Ally",)],
    "resolve_entity": [("people/zorblax-hidden",), ("Quux Shadow",), ("Quasar Veil",), ("zorblax",),
                       ("zorblax-hidden",), ("notes/broken-secret",), ("broken-secret",)],
    "visible_slugs": [(PRIVATE_SLUGS + PUBLIC_SLUGS,)],
    "page": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "aliases": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "tags": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "timeline": [(s, 10) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "chunks": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "links": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "backlink_count": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "backlinks": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS] + [("people/zorblax-hidden.md",)],
    "linked_tasks": [(s, 10) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "list_pages": [(None, 100), ("people/", 100), ("notes/", 100)],
    "dating": [(PRIVATE_SLUGS + PUBLIC_SLUGS,)],
    "pages_changed_since": [("", None, FAR_FUTURE, 100), ("", "", FAR_FUTURE, 100)],
    "count_pages": [()],
    "paths": [(PRIVATE_SLUGS + PUBLIC_SLUGS,)],
    "page_at": [("people/zorblax-hidden.md",), ("notes/broken-secret.md",), ("people/alice-example.md",)],
    "page_ref": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS],
    "titled": [("Quasar Veil", 10), ("quasar veil", 10), ("broken-secret", 10), ("Brokenfront Marker", 10),
               ("Alice Example", 10)],
    "names": [()],
    "chunk_hashes": [()],
    "search": [("privmark", 10), ("Quasar Veil", 10), ("quux shadow", 10), ("brokenfront marker", 10),
               ("zorblax hidden", 10), ("tagprivmark", 10), ("robots", 10)],
    "get_page": [(s,) for s in PRIVATE_SLUGS + PUBLIC_SLUGS] + [("people/zorblax-hidden.md",)],
}
# writes and lifecycle: nothing read back (put_page as the world is tests/test_private_put.py's)
NOT_READS = {"note_retrieved", "put_page", "close"}


def contract_methods() -> list[str]:
    from brain.daemon.stores.pages import PagesStore

    return sorted(n for n, f in vars(PagesStore).items() if inspect.isfunction(f) and not n.startswith("_"))


def leaves(value) -> list[str]:
    """Every string and number inside a result: dataclass fields, dict keys and values, items."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in leaves(getattr(value, f.name))]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in leaves(k) + leaves(v)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [s for v in value for s in leaves(v)]
    return [] if value is None else [str(value)]


def call(store, name: str, args: tuple, viewer):
    """Pass the viewer where the method's signature names it (its place differs by method)."""
    params = list(inspect.signature(getattr(store, name)).parameters)
    at = params.index("viewer")
    return getattr(store, name)(*args[:at], viewer, *args[at:])


def write_vault(vault) -> None:
    write(vault, "people/zorblax-hidden.md", SECRET)
    write(vault, "notes/broken-secret.md", BROKEN)
    write(vault, "people/alice-example.md", ALICE)
    write(vault, "companies/acme-robotics.md", ACME)


def embedded_store(vault, open_index, request):
    """The engine's SQLite pages store, and the private chunks' hashes."""
    e = open_index(vault)
    return e.pages, [r[0] for r in e.page_db.execute(
        "SELECT c.hash FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.visibility = 'private'")]


def postgres_store(vault, open_index, request):
    """The PostgreSQL pages store over the same vault, loaded by its vault indexer."""
    dsn = request.getfixturevalue("pg_dsn")   # skips when the postgres extra is missing
    import psycopg

    pages = pg_pages_store(vault, dsn)
    request.addfinalizer(pages.close)
    with psycopg.connect(dsn) as conn:
        hashes = [r[0] for r in conn.execute(
            "SELECT c.hash FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.visibility = 'private'")]
    return pages, hashes


@pytest.fixture(params=[embedded_store, postgres_store], ids=["embedded", "postgres"])
def store(vault, open_index, request):
    """(a pages store of each backend, the substring markers, the whole values) of the private pages."""
    from brain.indexer.vault.visibility import Viewer

    write_vault(vault)
    pages, private_hashes = request.param(vault, open_index, request)
    private_hashes = [h.lower() for h in private_hashes]
    assert len(private_hashes) >= 2, "both private pages were indexed with chunks"
    heads = [pages.page(s, Viewer.owner()) for s in PRIVATE_SLUGS]
    assert all(heads), "both private pages are indexed"
    exact = {v.lower() for h in heads if h for v in (h.slug, f"{h.slug}.md", h.title)}
    return pages, MARKERS + private_hashes, exact


def test_every_contract_method_has_an_entry_and_takes_a_viewer():
    from brain.daemon.stores.pages import PagesStore
    from brain.indexer.vault.visibility import Viewer

    methods = contract_methods()
    missing = set(methods) - set(READS) - NOT_READS
    assert not missing, f"add these PagesStore methods to READS (or NOT_READS if they read nothing): {missing}"
    assert not (set(READS) | NOT_READS) - set(methods), "the table names methods the contract no longer has"
    for name in READS:
        hints = typing.get_type_hints(getattr(PagesStore, name))
        assert hints.get("viewer") is Viewer, f"PagesStore.{name} must take `viewer: Viewer`"


def test_each_store_satisfies_the_contract(store):
    from brain.daemon.stores.pages import PagesStore

    pages, _, _ = store
    assert isinstance(pages, PagesStore)
    for name in contract_methods():   # same parameters, in the same order, as the contract
        assert list(inspect.signature(getattr(pages, name)).parameters) == \
            list(inspect.signature(getattr(PagesStore, name)).parameters)[1:], name


def leaks(shown: list[str], markers: list[str], exact: set[str]) -> list[str]:
    return sorted({m for m in markers for s in shown if m in s} | (exact & set(shown)))


def test_no_read_shows_a_private_page_to_the_world(store):
    from brain.indexer.vault.visibility import Viewer

    pages, markers, exact = store
    for name, cases in READS.items():
        for args in cases:
            shown = [s.lower() for s in leaves(call(pages, name, args, Viewer.world()))]
            leaked = leaks(shown, markers, exact)
            assert not leaked, f"{name}{args} shows the world {leaked}: {shown}"


def test_the_owner_sees_every_private_marker_somewhere(store):
    """The vault really holds what the world must not see, and the table really asks for it."""
    from brain.indexer.vault.visibility import Viewer

    pages, markers, exact = store
    shown = [s.lower() for name, cases in READS.items() for args in cases
             for s in leaves(call(pages, name, args, Viewer.owner()))]
    assert set(leaks(shown, markers, exact)) == set(markers) | exact


def test_counts_leave_private_pages_out(store):
    from brain.indexer.vault.visibility import Viewer

    pages, _, _ = store
    world, owner = pages.count_pages(Viewer.world()), pages.count_pages(Viewer.owner())
    assert (world.pages, owner.pages) == (2, 4)
    assert world.chunks < owner.chunks and world.problems < owner.problems  # the broken page's problem
    assert pages.backlink_count("companies/acme-robotics", Viewer.world()) == 1
    assert pages.backlink_count("companies/acme-robotics", Viewer.owner()) == 3
