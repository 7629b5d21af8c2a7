"""What the pages store hands back: plain values, never a database row or cursor.

The pages store contract (docs/architecture.md, "Stores") names these types;
the dicts that go out on the wire unchanged (a listed page, a backlink) are
TypedDicts, everything a verb reshapes is a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict


@dataclass(frozen=True)
class PageHead:
    """A page as resolution and cards see it (the columns the card fields are built from)."""

    slug: str
    title: str
    type: str | None
    summary: str | None
    lead: str
    updated_at: str
    last_retrieved_at: str | None

    @property
    def last_touched(self) -> str:
        """The later of its change and its last retrieval (the tie-break among candidates)."""
        return max(self.updated_at or "", self.last_retrieved_at or "")


@dataclass(frozen=True)
class TimelineEntry:
    date: str       # YYYY-MM-DD as the page wrote it
    summary: str


@dataclass(frozen=True)
class LinkEnd:
    """One resolved typed link, seen from a page: the other end's slug."""

    type: str | None
    context: str | None
    slug: str


@dataclass(frozen=True)
class PageLinks:
    """A page's resolved links other than bare-name mentions: outgoing oldest first,
    incoming newest first (the order card edges are taken in)."""

    outgoing: list[LinkEnd] = field(default_factory=list)
    incoming: list[LinkEnd] = field(default_factory=list)


@dataclass(frozen=True)
class LinkedTask:
    """An open task on another page that links this one (docs/architecture.md, "Open tasks")."""

    slug: str               # the page the task is written on
    text: str               # the task as written, without its checkbox
    due: str | None         # YYYY-MM-DD, when the task names one
    updated_at: str         # that page's last change (what dates a task without a due date)


@dataclass(frozen=True)
class Chunk:
    heading: str | None
    text: str


@dataclass(frozen=True)
class PageDating:
    """What dates a page for a time window (docs/protocol.md, synthesize's since/until)."""

    slug: str
    title: str
    updated_at: str
    frontmatter_date: str | None   # the frontmatter `date`, as text; None when absent or empty
    timeline_dates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChangedPage:
    """One page in delta's pages arm, keyed by (updated_at, slug)."""

    slug: str
    title: str
    updated_at: str


@dataclass(frozen=True)
class PageCounts:
    pages: int
    chunks: int
    problems: int


@dataclass(frozen=True)
class PageRef:
    """A page and its vault-relative file."""

    slug: str
    path: str


@dataclass(frozen=True)
class PageName:
    """Every name a person may type for a page: slug, title, file and (one row each) alias."""

    slug: str
    title: str
    path: str
    alias: str | None


class ListedPage(TypedDict):
    slug: str
    title: str
    type: str | None
    updated_at: str


class Backlink(TypedDict):
    slug: str
    title: str
    type: str | None
    context: str | None
    source: str


class SearchHit(TypedDict):
    """One page search result, as search and recall's pages arm answer it (docs/protocol.md §4.6)."""

    slug: str
    title: str
    chunk: str | None
    evidence: str
    create_safety: str
    score: float
    provenance: str
    indexed_at: str
    stale: bool


class PageFile(TypedDict):
    """A page as it is on disk now (get_page)."""

    slug: str
    title: str
    type: str | None
    content: str
    frontmatter: dict[str, object]
    hash: str
    updated_at: str


class WrittenPage(TypedDict):
    """What put_page answers."""

    slug: str
    path: str
    hash: str
    created: bool
