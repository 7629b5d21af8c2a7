"""Where a fact filed under a name lives now: the page that name means today, wherever it moved.

docs/architecture.md, "Entity identity". A fact is filed under the name its
caller gave (the log line's `entity_slug`, kept as the projection's
`filed_as`); what it is about is the entity, whose page may since have been
moved, renamed, or created. Its home is worked out from the user's files
alone (the vault's pages and the facts logs, with their move records), so a
rebuild on any device attaches every fact to the same page:

1. a page whose slug is the filed name: that page;
2. else a move recorded in the logs from that slug (the latest one, followed
   along at most MAX_HOPS moves) that ends at a page: that page;
3. else the one world-visible page the name means: its last segment as a
   slug tail, an alias or an exact title, with or without its dashes
   (the pages store's `resolve_entity`, the resolver remember files under),
   in the same top folder when the name has one;
   a name several pages share stays where it is (never guessed), and a
   private page never takes a fact by name (its slug would reach remote
   callers in the fact's `entity_slug`);
4. else the name itself: an entity with facts and no page yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...indexer.vault.visibility import Viewer
from ..stores.facts import MAX_MOVE_SLUG_CHARS
from ..stores.pages import PagesStore

MAX_HOPS = 16          # a chain of moves longer than this is a loop, or not worth following
_BATCH = 500

Move = tuple[str, str]   # (from slug, to slug)


def move_problem(rec: dict) -> str | None:
    """Why a `{"op": "move"}` log record cannot be read, or None when it can."""
    for key in ("from", "to"):
        value = rec.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_MOVE_SLUG_CHARS:
            return f"a move record needs `{key}`: a slug of 1 to {MAX_MOVE_SLUG_CHARS} characters"
    if rec["from"] == rec["to"]:
        return "a move record's `from` and `to` are the same slug"
    if not isinstance(rec.get("ts"), str):
        return "a move record needs `ts`, the time it was made"
    return None


def by_name(name: str, pages: PagesStore) -> str | None:
    """The one world-visible page a filed name means by its words (step 3), or None. A name with
    a folder (`people/lisa-park`) only finds a page in the same top folder: `projects/atlas` is
    not the company Atlas."""
    world = Viewer.world()
    folder, _, tail = name.rpartition("/")
    tries = [tail]
    if "-" in tail:
        tries.append(tail.replace("-", " "))
    top = folder.split("/", 1)[0] + "/" if folder else ""
    for attempt in tries:
        hit = pages.resolve_entity(attempt, world)
        if hit and hit.startswith(top):
            return hit
    return None


def resolve_homes(names: Iterable[str], pages: PagesStore, moves: Mapping[str, str]) -> dict[str, str]:
    """filed name → the slug its facts belong to now (the module's order). `moves`: each slug's
    latest recorded move, from → to."""
    names = sorted(set(names))
    owner = Viewer.owner()
    existing: set[str] = set()
    for i in range(0, len(names), _BATCH):
        existing.update(pages.paths(names[i:i + _BATCH], owner))
    homes: dict[str, str] = {}
    for name in names:
        if name in existing:
            homes[name] = name
            continue
        homes[name] = _followed(name, pages, moves) or by_name(name, pages) or name
    return homes


def _followed(name: str, pages: PagesStore, moves: Mapping[str, str]) -> str | None:
    at, seen = name, {name}
    for _ in range(MAX_HOPS):
        nxt = moves.get(at)
        if nxt is None or nxt in seen:
            return None
        seen.add(nxt)
        if pages.page_ref(nxt, Viewer.owner()) is not None:
            return nxt
        at = nxt
    return None
