"""One resolver from an entity name to a slug, shared by remember and recall.

If remember and recall canonicalized differently, a fact saved under
"Alice Example" would never be found under "people/alice-example". The order
is docs/protocol.md §4.4: an existing page the pages store resolves the name
to (`resolve_entity`: an existing slug, a unique alias, a unique
people/companies page for a one-word name, a unique exact title or slug tail,
high-precision stand-ins for the reference's fuzzy step), then a
deterministic slugify, and last where the facts filed under that slug
live now (their page moved, or appeared since). A viewer who may not see a private page never
resolves to it (its slug would leak).
"""

from __future__ import annotations

from ...indexer.vault.slugs import name_slug
from ...indexer.vault.visibility import Viewer
from ..stores.facts import FactsStore
from ..stores.pages import PagesStore


def canonical_entity_slug(name: str, pages: PagesStore | None, viewer: Viewer,
                          facts: FactsStore | None = None) -> str:
    raw = name.strip()
    if pages is not None:
        hit = pages.resolve_entity(raw, viewer)
        if hit:
            return hit
    slug = name_slug(raw)
    if facts is not None and pages is not None and slug:
        # a name facts were filed under before their page moved, or before it had a page
        # (docs/architecture.md, "Entity identity"): where those facts live now
        home = facts.home_of(slug)
        if home is not None and pages.page_ref(home, viewer) is not None:
            return home
    return slug
