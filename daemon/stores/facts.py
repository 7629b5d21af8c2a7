"""The facts store contract: the facts logs, their projection and facts search (docs/architecture.md, "Stores").

A caller says which facts it wants with a `FactScope` (what they are about,
when, in what order) and whom they are for with a `Viewer`; the store turns
both into its own query language and applies visibility itself. No SQL, and no
fragment of it, is part of this contract.
"""

from __future__ import annotations

import enum
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import Protocol, TypedDict, runtime_checkable

from ...indexer.vault.visibility import Viewer

FactField = str | int | float | None


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact as the projection holds it (docs/protocol.md §3.1 lists what the wire shows of it)."""

    id: int
    fact: str
    kind: str
    entity_slug: str | None
    visibility: str
    source: str
    source_session: str | None
    context: str | None
    confidence: float
    notability: str
    valid_from: str
    valid_until: str | None
    created_at: str
    expired_at: str | None
    expire_reason: str | None
    superseded_by: int | None

    def __getitem__(self, key: str) -> FactField:
        """A field by name: facts have always been read as `row["fact"]` above the store."""
        if key not in FACT_FIELDS:
            raise KeyError(key)
        value: FactField = getattr(self, key)
        return value


# what record_moves takes: a slug a move record names is 1 to MAX_MOVE_SLUG_CHARS characters (a longer one
# is a bad line), and the reason a person's `brain facts move` gives (read by `brain doctor` and people)
MAX_MOVE_SLUG_CHARS = 1000
MOVED_BY_USER = "brain facts move"

FACT_ORDER = tuple(f.name for f in fields(Fact))
FACT_FIELDS = frozenset(FACT_ORDER)


class Order(enum.Enum):
    """The orders a listing comes in; ties are broken by id, newest (highest) first."""

    NEWEST_VALID = "newest valid_from"      # when the fact became true
    NEWEST_SAVED = "newest created_at"      # when it was saved
    LATEST_ENDED = "latest end"             # when it was expired, or stops being valid
    ID = "id ascending"
    ID_DESC = "id descending"


SavedKey = tuple[str, int | None]
"""A point in save order: (created_at, id); id None stands for the whole millisecond at created_at."""


@dataclass(frozen=True)
class FactScope:
    """Which facts: every field set narrows the set (all must hold). The defaults are every
    active fact, newest valid_from first."""

    entity: str | None = None            # about this entity slug
    filed: bool = False                  # about some entity (filed under one)
    entities_or_words: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    """(entity slugs, words): about one of the entities, or whose text holds one of the words."""
    kind: str | None = None
    session: str | None = None           # saved in this session
    same_text: str | None = None         # the same text, case and runs of whitespace aside
    grep: str | None = None              # text contains this, case-insensitively
    valid_since: str | None = None       # valid_from at or after (ISO 8601)
    valid_through: str | None = None     # valid_from at or before
    saved_since: str | None = None       # created_at at or after
    saved_after: SavedKey | None = None  # strictly after this point in save order
    saved_before: SavedKey | None = None  # strictly before this one
    replacing_only: bool = False         # only facts another fact superseded
    ended_since: str | None = None       # expired, or valid until, at or after
    include_expired: bool = False        # expired facts and those past valid_until too
    order: Order = Order.NEWEST_VALID

    def narrows(self) -> bool:
        """Whether anything beyond activity narrows the set (a small scope is searched differently)."""
        return any(v not in (None, False) for v in (
            self.entity, self.filed, self.entities_or_words, self.kind, self.session, self.same_text, self.grep,
            self.valid_since, self.valid_through, self.saved_since, self.saved_after, self.saved_before,
            self.replacing_only, self.ended_since))


class FactCounts(TypedDict):
    facts: int
    active_facts: int
    bad_log_lines: int


@runtime_checkable
class FactsStore(Protocol):
    """What verbs and the CLI may ask of the facts logs, their projection and facts search.

    Every read takes the `Viewer` it is for: a viewer that may not see private
    facts never gets one, nor learns one exists (docs/protocol.md §4.8).
    """

    def get(self, fid: int, viewer: Viewer) -> Fact | None:
        """The fact with this id, expired or not; None when there is none the viewer may see."""
        ...

    def listed(self, scope: FactScope, viewer: Viewer, limit: int | None) -> list[Fact]:
        """The facts in scope, in `scope.order`, at most `limit` (None: all)."""
        ...

    def ranked(self, query: str, scope: FactScope, viewer: Viewer, limit: int) -> list[Fact]:
        """The facts in scope most relevant to `query`, best first (docs/architecture.md, "Facts ranking")."""
        ...

    def count(self, scope: FactScope, viewer: Viewer, cap: int) -> int:
        """How many facts are in scope, counting no further than `cap`."""
        ...

    def counts(self, viewer: Viewer) -> FactCounts:
        """All facts, active facts, and log lines that could not be read."""
        ...

    def by_call_key(self, key: str, viewer: Viewer) -> Fact | None:
        """The fact the call with this idempotency key wrote, expired or not (docs/protocol.md §3.2)."""
        ...

    def supersedes(self, fid: int, viewer: Viewer) -> bool:
        """Whether fact `fid` expired another when it was written."""
        ...

    def home_of(self, name: str) -> str | None:
        """The slug of the page the facts filed under `name` belong to now, when that is another
        slug (the page moved, or appeared since; docs/architecture.md, "Entity identity"); else None."""
        ...

    def record_moves(self, moves: list[tuple[str, str]], why: str) -> int:
        """File the facts of each (from slug, to slug) under `to` from now on, by a move record in
        the log (past lines are never edited); how many moves were recorded (0: this store does not
        move facts)."""
        ...

    def count_filed(self, name: str, viewer: Viewer) -> int:
        """Active facts the viewer may see filed under `name`, or belonging to it now."""
        ...

    def filed_without_page(self, viewer: Viewer) -> list[tuple[str, int]]:
        """(entity slug, active facts the viewer may see) of each entity facts belong to that has no page."""
        ...

    def insert(self, *, fact: str, kind: str, entity_slug: str | None, visibility: str, source: str,
               valid_until: str | None, source_session: str | None = None, context: str | None = None,
               supersede: int | None = None, now: str | None = None, call_key: str | None = None) -> int:
        """Durably record a new fact (and, in the same write, the expiry of the one it supersedes); its id."""
        ...

    def expire(self, fid: int, reason: str | None) -> bool:
        """Expire a fact, keeping it in the audit trail; False when it already was."""
        ...

    def exclusive(self) -> AbstractContextManager[object]:
        """Hold off every other write while the reads and the write inside decide together
        (remember's replay, dedup and insert)."""
        ...

    def rebuild(self) -> int:
        """Drop the projection and replay every log; the number of log lines read."""
        ...

    def vectors_current(self, model_id: str) -> bool:
        """Whether every active fact filed under an entity has a vector made by `model_id` from its
        current text (docs/architecture.md, "Stores": the vectors are kept beside the facts)."""
        ...
