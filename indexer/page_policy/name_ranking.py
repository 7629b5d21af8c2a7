"""Which pages a typed name means, best first: the ranking both pages stores answer with.

The policy is written once here (docs/protocol.md §3.3, §4.4): what a name
is looked up by, in which rank, and the order of the candidates. Each store
answers the lookups in its own SQL (`NameRanking._heads_where` and
`_slugs_where`: indexer/pages/store_names.py, daemon/postgres/pages_names.py),
applying the viewer inside the query, so a private page never resolves for a
viewer who may not see it (its slug would leak).
"""

from __future__ import annotations

import re
from typing import Literal

from ..vault.slugs import looks_like_slug, normalize_alias, slugify, slugify_path
from ..vault.visibility import Viewer
from .page_types import PageHead

# an arm that matches many pages (a tail like "index") keeps its freshest few
ARM_LIMIT = 20
# the longest name worth looking up; longer input is a paste, not a name
MAX_NAME = 300

# what a name is looked up by: a declared alias, a page's title key, its slug, the last
# segment of its slug, or (one word) the people/companies pages whose slug starts with it
Arm = Literal["alias", "title", "slug", "tail", "first_name"]

_WS = re.compile(r"\s+")


def first_name_ranges(word: str) -> list[tuple[str, str]]:
    """The slug ranges of people/<word>-… and companies/<word>-…, bounds excluded: '-' + 1 is '.',
    so a range compare uses the slug index where LIKE would scan every page."""
    return [(f"people/{word}-", f"people/{word}."), (f"companies/{word}-", f"companies/{word}.")]


def by_rank_then_freshness(found: dict[int, tuple[int, PageHead]]) -> list[PageHead]:
    """Candidates best first: lower rank, then the most recently touched, then the slug (a stable order)."""
    ranked = sorted(found.values(), key=lambda rh: rh[1].slug)   # stable sorts, least significant key first
    ranked.sort(key=lambda rh: rh[1].last_touched, reverse=True)
    ranked.sort(key=lambda rh: rh[0])
    return [head for _, head in ranked]


class NameRanking:
    """The name resolvers of a pages store, over the two lookups its backend answers."""

    def _heads_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[tuple[int, PageHead]]:
        """(page id, head) of the pages the viewer may see that `arm` finds for any of `keys`; an arm
        other than "slug" keeps its ARM_LIMIT most recently touched pages. first_name: keys = [word]."""
        raise NotImplementedError

    def _slugs_where(self, arm: Arm, keys: list[str], viewer: Viewer) -> list[str]:
        """Slugs of at most two distinct pages the viewer may see that `arm` finds (two: ambiguous)."""
        raise NotImplementedError

    def resolve_name(self, name: str, viewer: Viewer) -> list[PageHead]:
        """Candidate pages for an entity name, best first: alias > exact title/slug > slug
        suffix > (a one-word name) people/companies pages whose slug starts with it
        (docs/protocol.md §3.3). Within a rank the most recently touched page wins; the
        slug breaks remaining ties so the order is stable."""
        raw = name.strip()[:MAX_NAME]
        if not raw:
            return []
        tail = slugify(raw)
        best: dict[int, tuple[int, PageHead]] = {}

        def take(rank: int, arm: Arm, keys: list[str]) -> None:
            for pid, head in self._heads_where(arm, keys, viewer):
                if pid not in best or best[pid][0] > rank:
                    best[pid] = (rank, head)

        alias = normalize_alias(raw)
        if alias:
            take(0, "alias", [alias])
        take(1, "title", sorted({raw.lower(), _WS.sub(" ", raw).lower()}))
        take(1, "slug", sorted({s for s in (raw, raw.lower(), tail, slugify_path(raw)) if s}))
        if tail:
            # `tail` is the last slug segment, so tail = x is "slug ends with /x"
            # (or is x itself, which the exact arm already ranked higher)
            take(2, "tail", [tail])
        if tail and "-" not in tail and "/" not in raw:
            # beyond the reference: a first name finds people/<name>-… and
            # companies/<name>-…, the pages remember files "Alice"'s facts under (§4.4)
            take(3, "first_name", [tail])
        return by_rank_then_freshness(best)

    def resolve_alias(self, name: str, viewer: Viewer) -> list[str]:
        """Slugs of the pages (at most two: enough to tell unique from ambiguous) declaring `name` an alias."""
        key = normalize_alias(name)
        return self._slugs_where("alias", [key], viewer) if key else []

    def resolve_entity(self, name: str, viewer: Viewer) -> str | None:
        """The one existing page an entity name means, for remember and recall to file facts
        under (docs/protocol.md §4.4): an existing slug, a unique alias, a unique
        people/companies page for a one-word name, a unique exact title or slug tail."""
        raw = name.strip()
        if looks_like_slug(raw):
            found = self._slugs_where("slug", [raw], viewer)
            if found:
                return found[0]
        aliased = self.resolve_alias(raw, viewer)
        if len(aliased) == 1:
            return aliased[0]
        if "/" in raw:
            return None
        tok = slugify(raw)
        if tok and "-" not in tok:
            # the two pages named by the word itself, and those whose slug starts with it
            named = self._slugs_where("slug", [f"people/{tok}", f"companies/{tok}"], viewer)
            named += self._slugs_where("first_name", [tok], viewer)
            if len(set(named)) == 1:
                return named[0]
        # a multi-word name that is exactly one page's title
        titled = self._slugs_where("title", [" ".join(raw.split()).lower()], viewer)
        if len(titled) == 1:
            return titled[0]
        # a bare slug ("alice-example") that is the last segment of exactly one page
        if tok:
            tailed = self._slugs_where("tail", [tok], viewer)
            if len(tailed) == 1:
                return tailed[0]
        return None
