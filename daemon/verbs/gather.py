"""Gather: the evidence synthesize hands to the model.

Hybrid page search for the question, filtered to the caller's visibility and
the time window, expanded to page text from the page tables and packed into a
token budget; plus active facts about the gathered pages or mentioning the
question's words.

Page dates for the window: a page's dates are its frontmatter `date` and the
dates of its timeline entries; a page with neither is dated by its file's
modification time (pages.updated_at). A page is in the window when any of its
dates (a whole day, for day-precision dates) overlaps [since, until].
Facts are in the window when their valid_from falls inside it.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field

from ...indexer.vault.timestamps import iso
from ..protocol.budget import estimate_tokens, pack_greedy
from ..protocol.caller import Caller
from ..stores.engine import Engine
from . import steps
from ..stores.facts import FactScope, Order
from ..protocol.timeparse import parse_date
from ..stores.pages import Chunk, PageDating, SearchHit

EVIDENCE_BUDGET_TOKENS = 6000   # page text in the prompt
PAGE_CAP_TOKENS = 1500          # one page's share, so one long page cannot crowd out the rest
FACTS_BUDGET_TOKENS = 1200
MAX_PAGES = 12
MAX_FACTS = 40

_STOPWORDS = frozenset(
    "about after again also and any are because been before being between both but can could did does "
    "doing down during each few for from further had has have having her here hers him his how into its "
    "just more most not now off once only other our out over own same she should some such than that the "
    "their them then there these they this those through too under until very was were what when where "
    "which while who whom why will with would you your".split()
)


@dataclass(frozen=True)
class Window:
    """The since/until filter; either end may be open."""

    since: _dt.datetime | None = None
    until: _dt.datetime | None = None

    @property
    def active(self) -> bool:
        return self.since is not None or self.until is not None

    def overlaps(self, start: _dt.datetime, end: _dt.datetime) -> bool:
        return (self.since is None or end >= self.since) and (self.until is None or start <= self.until)

    def describe(self) -> str:
        a = iso(self.since) if self.since else "the beginning"
        b = iso(self.until) if self.until else "now"
        return f"from {a} to {b}"


@dataclass
class GatheredPage:
    slug: str
    title: str
    text: str        # what the model sees
    excerpt: str     # the best-matching chunk, for the extractive digest
    date: str | None


@dataclass
class Gathered:
    pages: list[GatheredPage] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)
    degraded: str | None = None  # why the page search left the vectors out (indexer/embeddings/search_modes.py)

    def slugs(self) -> list[str]:
        return [p.slug for p in self.pages]


def question_terms(question: str) -> list[str]:
    """Distinct content words of the question, in order."""
    seen: list[str] = []
    for w in re.findall(r"[\w][\w'-]*", question.lower()):
        w = w.strip("'-")
        if len(w) >= 3 and w not in _STOPWORDS and w not in seen:
            seen.append(w)
    return seen


def _day_span(d: _dt.date) -> tuple[_dt.datetime, _dt.datetime]:
    start = _dt.datetime(d.year, d.month, d.day, tzinfo=_dt.timezone.utc)
    return start, start + _dt.timedelta(days=1) - _dt.timedelta(microseconds=1)


def _date_span(value) -> tuple[_dt.datetime, _dt.datetime] | None:
    text = str(value).strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return _day_span(_dt.date.fromisoformat(text))
        except ValueError:
            return None
    ts = parse_date(text) if text else None
    return (ts, ts) if ts else None


def page_dates(page: PageDating) -> list[tuple[_dt.datetime, _dt.datetime]]:
    """The spans that date a page (see the module docstring)."""
    spans = []
    if page.frontmatter_date is not None:
        span = _date_span(page.frontmatter_date)
        if span:
            spans.append(span)
    for d in page.timeline_dates:
        span = _date_span(d)
        if span:
            spans.append(span)
    if not spans and page.updated_at:
        span = _date_span(page.updated_at)
        if span:
            spans.append(span)
    return spans


def _page_text(page_chunks: list[Chunk], excerpt: str, cap_tokens: int) -> str:
    """The page's chunks, best match first, cut to the cap."""
    chunks: list[str] = []
    for c in page_chunks:
        text, heading = c.text or "", (c.heading or "").strip()
        # the heading says what a section is about ("## Timeline"); keep it unless the text has it
        chunks.append(f"## {heading}\n{text}" if heading and heading not in text[:200] else text)
    full = "\n\n".join(c.strip() for c in chunks if c.strip())
    cap_chars = cap_tokens * 4
    if not full:
        full = excerpt
    elif len(full) > cap_chars and excerpt:
        # the search's excerpt is a short passage: lead with the whole chunk around it
        kept = [c.strip() for c in chunks if c.strip()]
        best = [c for c in kept if excerpt.strip() in c] or [excerpt.strip()]
        full = "\n\n".join(best + [c for c in kept if c not in best])
    if len(full) > cap_chars:
        full = full[:cap_chars].rsplit(" ", 1)[0] + " …"
    return full


def gather(engine: Engine, question: str, caller: Caller, window: Window,
           budget_tokens: int = EVIDENCE_BUDGET_TOKENS) -> Gathered:
    """Pages and facts for the question, as the caller may see them, within the budget."""
    k = 60 if window.active else 24
    results, degraded = steps.find_pages(engine, question, k, caller)
    out = Gathered(degraded=degraded)
    hits: list[SearchHit] = []
    for r in results or []:
        if r.get("slug") and all(h["slug"] != r["slug"] for h in hits):
            hits.append(r)
    # search already hides private pages from remote callers; the store checks again, cheaply
    viewer = caller.viewer
    rows = engine.pages.dating([h["slug"] for h in hits], viewer)
    used = 0
    for h in hits:
        if len(out.pages) >= MAX_PAGES or budget_tokens - used < 100:
            break
        row = rows.get(h["slug"])
        if row is None and not viewer.sees_private:
            continue  # a page the viewer may not see (or one gone since the search)
        spans = page_dates(row) if row is not None else []
        if window.active and not any(window.overlaps(a, b) for a, b in spans):
            continue  # an undatable page cannot be shown to be inside the window
        excerpt = (h.get("chunk") or "").strip()
        cap = min(PAGE_CAP_TOKENS, budget_tokens - used)
        text = _page_text(engine.pages.chunks(h["slug"], viewer) if row is not None else [], excerpt, cap)
        if not text.strip():
            continue
        used += estimate_tokens(text)
        date = max((a for a, _ in spans), default=None)
        out.pages.append(GatheredPage(
            slug=h["slug"], title=(row.title if row is not None else "") or h.get("title") or h["slug"],
            text=text, excerpt=excerpt or text[:600], date=date.date().isoformat() if date else None))
    out.facts = _gather_facts(engine, question, out.slugs(), caller, window)
    return out


def _gather_facts(engine: Engine, question: str, slugs: list[str], caller: Caller, window: Window) -> list[dict]:
    words = tuple(term for term in question_terms(question)[:6] if len(term) >= 4)
    if not slugs and not words:
        return []
    scope = FactScope(entities_or_words=(tuple(slugs), words),
                      valid_since=iso(window.since) if window.since is not None else None,
                      valid_through=iso(window.until) if window.until is not None else None,
                      order=Order.NEWEST_VALID)
    rows = engine.facts.listed(scope, caller.viewer, MAX_FACTS)
    kept, _used = pack_greedy(rows, [estimate_tokens(r.fact) + 8 for r in rows], FACTS_BUDGET_TOKENS)
    return [{"id": r.id, "fact": r.fact, "kind": r.kind, "entity_slug": r.entity_slug,
             "date": (r.valid_from or "")[:10]} for r in kept]
