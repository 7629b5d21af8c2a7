"""One resolver from an entity name to a slug, shared by remember and recall.

If remember and recall canonicalized differently, a fact saved under
"Alice Example" would never be found under "people/alice-example". The order
is docs/protocol.md §4.4: an existing page the pages store resolves the name
to (`resolve_entity`: an existing slug, a unique alias, a unique
people/companies page for a one-word name, a unique exact title or slug tail,
high-precision stand-ins for the reference's fuzzy step), then a
deterministic slugify. A viewer who may not see a private page never
resolves to it (its slug would leak).
"""

from __future__ import annotations

from ...indexer.vault.slugs import slugify, slugify_path
from ...indexer.vault.visibility import Viewer
from ..stores.pages import PagesStore


def canonical_entity_slug(name: str, pages: PagesStore | None, viewer: Viewer) -> str:
    raw = name.strip()
    if pages is not None:
        hit = pages.resolve_entity(raw, viewer)
        if hit:
            return hit
    if "/" in raw:
        return slugify_path(raw) or slugify(raw)
    return slugify(raw)
