"""Entity cards: resolve a name to a page and describe it (docs/protocol.md §3.3).

Everything here is a handful of reads of the pages store (daemon/stores/pages.py)
plus the facts store; no model, no LLM, no search index except for a miss.

Visibility is one flag, `world_only`. When it is set (every remote caller, and
context_pack/delta without include_private), the pages store reads as the world
(`Viewer.world()`), so private pages neither resolve nor appear as edge
endpoints or backlinks, and private facts appear nowhere.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
from typing import Sequence

from ...indexer.vault.tasks import open_tasks
from ...indexer.vault.timestamps import utcnow
from ...indexer.vault.visibility import Viewer
from ..protocol.caller import Caller
from ..stores.engine import Engine
from . import steps
from ..stores.facts import FactScope
from ..stores.pages import PageHead, PageLinks, TimelineEntry

log = logging.getLogger("brain.cards")

SUMMARY_MAX = 160
CONTEXT_MAX = 160
MAX_EDGES = 10
MAX_THREADS = 3
MAX_RUNNERS_UP = 3
# only the newest timeline entries are considered for open threads (§9.5)
RECENT_TIMELINE_ENTRIES = 5
RECENT_EVENT_DAYS = 90
ACTIVE_FACT_CAP = 100
# the longest name worth looking up; longer input is a paste, not a name
MAX_NAME = 300

_WS = re.compile(r"\s+")

WORLD = Caller(remote=True, client_id="remote", transport="inproc")


def clip(text: str | None, limit: int) -> str:
    """Whitespace collapsed, at most `limit` characters (the last one an ellipsis)."""
    s = _WS.sub(" ", text or "").strip()
    return s if len(s) <= limit else s[: limit - 1] + "…"


def timeline_iso(date: str | None) -> str | None:
    """A timeline date (YYYY-MM-DD) as the midnight-UTC instant every other date uses."""
    if not date:
        return None
    return f"{date[:10]}T00:00:00.000Z"


# -- resolution -------------------------------------------------------------

def resolve(engine: Engine, name: str, world_only: bool) -> list[PageHead]:
    """Candidate pages for `name`, best first (the pages store's resolve_name, docs/protocol.md §3.3);
    with none, the page a moved page's old slug, or a name facts were filed under, leads to now
    (docs/architecture.md, "Entity identity")."""
    return _resolved(engine, name, world_only)[0]


def _resolved(engine: Engine, name: str, world_only: bool) -> tuple[list[PageHead], str | None]:
    """resolve's pages, and the canonical slug of the name when no page has it by name (None when
    one does): where its facts are filed, for a facts-only card."""
    viewer = viewer_of(world_only)
    rows = engine.pages.resolve_name(name, viewer)
    if rows:
        return rows, None
    home = steps.canonical_entity(engine, name.strip()[:MAX_NAME], WORLD if world_only else Caller.local())
    page = engine.pages.page(home, viewer) if home else None
    return ([page] if page is not None else []), home


def viewer_of(world_only: bool) -> Viewer:
    return Viewer.world() if world_only else Viewer.owner()


# -- the card ---------------------------------------------------------------

def build_card(engine: Engine, page: PageHead, world_only: bool) -> dict:
    """The card for one resolved page (§3.3 field table)."""
    pages, viewer, slug = engine.pages, viewer_of(world_only), page.slug
    timeline = pages.timeline(slug, viewer, RECENT_TIMELINE_ENTRIES)
    return {
        "entity": {"slug": slug, "title": page.title or slug, "type": page.type or None},
        "aka": pages.aliases(slug, viewer),
        "summary": page_summary(page),
        "last_touched": {
            "updated_at": page.updated_at or None,
            "last_retrieved_at": page.last_retrieved_at or None,
            "last_timeline_date": timeline_iso(timeline[0].date) if timeline else None,
        },
        "open_threads": open_threads(engine, slug, timeline, world_only, page_tasks(engine, page, viewer),
                                     tasks_elsewhere(engine, slug, viewer)),
        "edges": edges(pages.links(slug, viewer)),
        "backlink_count": pages.backlink_count(slug, viewer),
        "active_fact_count": engine.facts.count(FactScope(entity=slug), viewer_of(world_only), ACTIVE_FACT_CAP),
    }


def page_summary(page: PageHead) -> str:
    """Frontmatter summary, else the page's first prose sentence; ≤160 chars.

    Facts live in the facts log, never in a page's summary or lead, so no fact
    text of either visibility can reach a card through this field.
    """
    text = _WS.sub(" ", page.summary or "").strip()
    if not text:
        text = _WS.sub(" ", page.lead or "").strip()
        # a body that starts with a table yields a header row, not prose
        if text.startswith("|"):
            text = ""
    return clip(text, SUMMARY_MAX)


def page_tasks(engine: Engine, page: PageHead, viewer: Viewer) -> list[tuple[str, str | None]]:
    """(text, date) of the page's unchecked Markdown tasks, from its indexed chunks (cut at
    headings, in order). The date is the task's due date, else the date it was first seen
    on the page (the engine's task_dates store): a thread without a date would never reach the context's
    open threads, and one dated by the page's last change would jump at every edit."""
    text = "\n".join(c.text for c in engine.pages.chunks(page.slug, viewer))
    if "[ ]" not in text:
        return []
    tasks = open_tasks(text)
    first = engine.task_dates.first_seen(page.slug, [t for t, due in tasks if not due], page.updated_at)
    return [(task, timeline_iso(due) if due else first[task]) for task, due in tasks]


def tasks_elsewhere(engine: Engine, slug: str, viewer: Viewer) -> list[dict]:
    """Open tasks on other pages that link this one, as threads naming the page they are written
    on (`page`), newest date first: the due date, else the date the task was first seen there."""
    linked = engine.pages.linked_tasks(slug, viewer, MAX_THREADS)
    first: dict[tuple[str, str], str] = {}
    for page, changed in {t.slug: t.updated_at for t in linked if not t.due}.items():
        undated = [t.text for t in linked if t.slug == page and not t.due]
        for text, date in engine.task_dates.first_seen(page, undated, changed).items():
            first[(page, text)] = date
    threads = [{"kind": "commitment", "text": t.text, "page": t.slug,
                "date": timeline_iso(t.due) if t.due else first[(t.slug, t.text)]} for t in linked]
    return sorted(threads, key=lambda th: th["date"], reverse=True)


def open_threads(engine: Engine, slug: str, timeline: list[TimelineEntry], world_only: bool,
                 tasks: Sequence[tuple[str, str | None]] = (), elsewhere: Sequence[dict] = ()) -> list[dict]:
    """Active commitments about the entity (newest first), then the page's open tasks
    (`- [ ] …`, commitments the page itself keeps, in page order), then open tasks on other
    pages that link it (tasks_elsewhere), then recent timeline events; ≤3 (docs/protocol.md §3.3)."""
    threads = [
        {"kind": "commitment", "text": f["fact"], "date": f["valid_from"]}
        for f in engine.facts.listed(FactScope(entity=slug, kind="commitment"), viewer_of(world_only), MAX_THREADS)
    ]
    for text, due in tasks[:max(0, MAX_THREADS - len(threads))]:
        threads.append({"kind": "commitment", "text": text, "date": due})
    threads.extend(elsewhere[:max(0, MAX_THREADS - len(threads))])
    cutoff = (engine.clock.now() - _dt.timedelta(days=RECENT_EVENT_DAYS)).date().isoformat()
    for entry in timeline:
        if len(threads) >= MAX_THREADS:
            break
        if entry.date[:10] >= cutoff:
            threads.append({"kind": "recent_event", "text": entry.summary, "date": timeline_iso(entry.date)})
    return threads


def edges(links: PageLinks) -> list[dict]:
    """≤10 typed links, outgoing first; resolved links only, one per (type, direction, page)."""
    out: list[dict] = []
    seen: set[tuple] = set()
    for direction, ends in (("out", links.outgoing), ("in", links.incoming)):
        # a plain mention of a page that a typed link already names says nothing new
        typed = {e.slug for e in ends if e.type and e.type != "mentions"}
        for e in ends:
            key = (e.type, direction, e.slug)
            if key in seen or ((e.type or "mentions") == "mentions" and e.slug in typed):
                continue
            seen.add(key)
            out.append({"type": e.type or "mentions", "direction": direction, "slug": e.slug,
                        "context": clip(e.context, CONTEXT_MAX) or None})
            if len(out) >= MAX_EDGES:
                return out
    return out


def threads_for(engine: Engine, page: PageHead, world_only: bool) -> list[dict]:
    """Just the open threads of a resolved page (what delta's thread arm needs)."""
    viewer = viewer_of(world_only)
    return open_threads(engine, page.slug, engine.pages.timeline(page.slug, viewer, RECENT_TIMELINE_ENTRIES),
                        world_only, page_tasks(engine, page, viewer), tasks_elsewhere(engine, page.slug, viewer))


# -- the entity verb's lookup ------------------------------------------------

def lookup(engine: Engine, name: str, world_only: bool) -> dict:
    """`{found, card?, suggestions?}` for a name, per §3.3 (no latency, no version)."""
    rows, slug = _resolved(engine, name, world_only)
    if rows:
        body: dict = {"found": True, "card": build_card(engine, rows[0], world_only)}
        runners = rows[1 : 1 + MAX_RUNNERS_UP]
        if runners:
            body["suggestions"] = [
                {"slug": r.slug, "title": r.title or r.slug, "create_safety": "exists"} for r in runners
            ]
        return body
    card = facts_only_card(engine, name, world_only, slug)
    if card is not None:
        return {"found": True, "card": card}
    return {"found": False, "suggestions": near_misses(engine, name, world_only)}


def facts_only_card(engine: Engine, name: str, world_only: bool, slug: str | None = None) -> dict | None:
    """A card for an entity that has facts filed under it but no page, or None.

    The name canonicalizes the way remember files it (docs/protocol.md §4.4),
    so `people/me` finds the facts saved with `--entity people/me`. Page-only
    fields stay empty; the summary says where the facts are, never what they say.
    """
    if slug is None:
        slug = steps.canonical_entity(engine, name.strip()[:MAX_NAME], WORLD if world_only else Caller.local())
    count = engine.facts.count(FactScope(entity=slug), viewer_of(world_only), ACTIVE_FACT_CAP) if slug else 0
    if not count:
        return None
    shown = f"{count}+" if count >= ACTIVE_FACT_CAP else str(count)
    typed = " ".join(name.split())[:MAX_NAME]
    # no page gives it a title: the name as the caller typed it ("Lisa", not the slug "lisa"),
    # unless they typed a path, which reads no better than the slug
    title = slug if "/" in typed else typed
    return {
        "entity": {"slug": slug, "title": title, "type": None},
        "aka": [],
        "summary": f"No page yet; {shown} active fact{'s' if count != 1 else ''} filed under {slug} "
                   f"(recall with entity {slug} lists them).",
        "last_touched": {"updated_at": None, "last_retrieved_at": None, "last_timeline_date": None},
        "open_threads": open_threads(engine, slug, [], world_only),
        "edges": [],
        "backlink_count": 0,
        "active_fact_count": count,
    }


def near_misses(engine: Engine, name: str, world_only: bool) -> list[dict]:
    """Near misses for a name that resolved to nothing, from a keyword search of the pages
    (docs/protocol.md §3.3): a name's neighbours in meaning are not what "did you mean"
    offers, and leaving the model out keeps a miss as fast as a hit; any failure ⇒ []."""
    try:
        caller = WORLD if world_only else Caller.local()
        hits, _degraded = steps.find_pages(engine, name.strip()[:MAX_NAME], MAX_RUNNERS_UP, caller, keyword_only=True)
        hits = [h for h in hits if h.get("slug")][:MAX_RUNNERS_UP]
        if world_only and hits:
            # the search already hides private pages; check again, cheaply,
            # because a stale search document must never leak one
            shown = set(engine.pages.visible_slugs([h["slug"] for h in hits], Viewer.world()))
            hits = [h for h in hits if h["slug"] in shown]
        out = []
        for h in hits:
            # at best a probable match, since the name itself resolved to no page
            safety = "probable" if h.get("create_safety") in ("exists", "probable") else "unknown"
            out.append({"slug": h["slug"], "title": h.get("title") or h["slug"], "create_safety": safety})
        return out
    except Exception:
        log.debug("near-miss search failed for %r", name, exc_info=True)
        return []

