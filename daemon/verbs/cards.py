"""Entity cards: resolve a name to a page and describe it (docs/protocol.md §3.3).

Everything here is a handful of indexed SQLite lookups over the page tables
plus the facts store; no model, no LLM, no search index except for a miss.

Visibility is one flag, `world_only`. When it is set (every remote caller, and
context_pack/delta without include_private), private pages neither resolve nor
appear as edge endpoints or backlinks, and private facts appear nowhere.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import sqlite3
from typing import Sequence

from ...indexer.vault.slugs import normalize_alias, slugify, slugify_path
from ...indexer.vault.tasks import open_tasks
from ..protocol.caller import Caller
from ..stores.engine import Engine

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
# an arm that matches many pages (a tail like "index") keeps its freshest few
ARM_LIMIT = 20
# the longest name worth looking up; longer input is a paste, not a name
MAX_NAME = 300

_PAGE_COLUMNS = "id, slug, title, type, visibility, summary, lead, updated_at, last_retrieved_at"
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


def last_touched(row) -> str:
    return max(row["updated_at"] or "", row["last_retrieved_at"] or "")


# -- resolution -------------------------------------------------------------

def resolve(db: sqlite3.Connection, name: str, world_only: bool) -> list[sqlite3.Row]:
    """Candidate pages for `name`, best first: alias > exact title/slug > slug suffix
    > (a one-word name) people/companies pages whose slug starts with it.

    Within a rank the most recently touched page wins (max of updated_at and
    last_retrieved_at); the slug breaks remaining ties so the order is stable.
    """
    raw = name.strip()[:MAX_NAME]
    if not raw:
        return []
    vis = " AND p.visibility != 'private'" if world_only else ""
    tail = slugify(raw)
    best: dict[int, tuple[int, sqlite3.Row]] = {}

    def take(rank: int, rows) -> None:
        for row in rows:
            if row["id"] not in best or best[row["id"]][0] > rank:
                best[row["id"]] = (rank, row)

    alias = normalize_alias(raw)
    if alias:
        take(0, db.execute(
            f"SELECT {_cols('p')} FROM aliases a JOIN pages p ON p.id = a.page_id "
            f"WHERE a.alias = ?{vis} ORDER BY {_touched('p')} DESC LIMIT {ARM_LIMIT}", (alias,)))
    titles = sorted({raw.lower(), _WS.sub(" ", raw).lower()})
    take(1, db.execute(
        f"SELECT {_cols('p')} FROM pages p WHERE p.title_key IN ({_marks(titles)}){vis} "
        f"ORDER BY {_touched('p')} DESC LIMIT {ARM_LIMIT}", titles))
    slugs = sorted({s for s in (raw, raw.lower(), tail, slugify_path(raw)) if s})
    take(1, db.execute(f"SELECT {_cols('p')} FROM pages p WHERE p.slug IN ({_marks(slugs)}){vis}", slugs))
    if tail:
        # `tail` is the last slug segment, so tail = x is "slug ends with /x"
        # (or is x itself, which the exact arm already ranked higher)
        take(2, db.execute(
            f"SELECT {_cols('p')} FROM pages p WHERE p.tail = ?{vis} "
            f"ORDER BY {_touched('p')} DESC LIMIT {ARM_LIMIT}", (tail,)))
    if tail and "-" not in tail and "/" not in raw:
        # beyond the reference: a first name finds people/<name>-… and
        # companies/<name>-…, the pages remember files "Alice"'s facts under (§4.4)
        take(3, db.execute(
            f"SELECT {_cols('p')} FROM pages p WHERE ((p.slug > ? AND p.slug < ?) OR "
            f"(p.slug > ? AND p.slug < ?)){vis} ORDER BY {_touched('p')} DESC LIMIT {ARM_LIMIT}",
            (f"people/{tail}-", f"people/{tail}.", f"companies/{tail}-", f"companies/{tail}.")))
    # stable sorts, least significant key first: slug, then touched desc, then rank
    ranked = sorted(best.values(), key=lambda rr: rr[1]["slug"])
    ranked.sort(key=lambda rr: last_touched(rr[1]), reverse=True)
    ranked.sort(key=lambda rr: rr[0])
    return [row for _, row in ranked]


def _cols(alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in _PAGE_COLUMNS.split(","))


def _touched(alias: str) -> str:
    return f"max({alias}.updated_at, COALESCE({alias}.last_retrieved_at, ''))"


def _marks(values) -> str:
    return ",".join("?" * len(values))


# -- the card ---------------------------------------------------------------

def build_card(engine: Engine, row: sqlite3.Row, world_only: bool) -> dict:
    """The card for one page row (§3.3 field table)."""
    db = engine.page_db
    pid, slug = row["id"], row["slug"]
    # each alias as the page writes it (its lookup key is lowercased)
    aka = [r[0] for r in db.execute("SELECT COALESCE(NULLIF(display, ''), alias) FROM aliases WHERE page_id = ? "
                                    "ORDER BY alias", (pid,))]
    timeline = recent_timeline(db, pid)
    return {
        "entity": {"slug": slug, "title": row["title"] or slug, "type": row["type"] or None},
        "aka": aka,
        "summary": page_summary(row),
        "last_touched": {
            "updated_at": row["updated_at"] or None,
            "last_retrieved_at": row["last_retrieved_at"] or None,
            "last_timeline_date": timeline_iso(timeline[0]["date"]) if timeline else None,
        },
        "open_threads": open_threads(engine, slug, timeline, world_only, page_tasks(db, row)),
        "edges": edges(db, pid, world_only),
        "backlink_count": backlink_count(db, pid, world_only),
        "active_fact_count": engine.facts.count_active_for_entity(slug, world_only, cap=ACTIVE_FACT_CAP),
    }


def recent_timeline(db: sqlite3.Connection, pid: int) -> list[sqlite3.Row]:
    """The page's newest timeline entries, newest first."""
    return db.execute("SELECT date, summary FROM timeline WHERE page_id = ? ORDER BY date DESC LIMIT ?",
                      (pid, RECENT_TIMELINE_ENTRIES)).fetchall()


def page_summary(row) -> str:
    """Frontmatter summary, else the page's first prose sentence; ≤160 chars.

    Facts live in the facts log, never in a page's summary or lead, so no fact
    text of either visibility can reach a card through this field.
    """
    text = _WS.sub(" ", row["summary"] or "").strip()
    if not text:
        text = _WS.sub(" ", row["lead"] or "").strip()
        # a body that starts with a table yields a header row, not prose
        if text.startswith("|"):
            text = ""
    return clip(text, SUMMARY_MAX)


def page_tasks(db: sqlite3.Connection, row: sqlite3.Row) -> list[tuple[str, str]]:
    """(text, date) of the page's unchecked Markdown tasks, from its indexed chunks (cut at
    headings, in order). The date is the task's due date, else the page's last change:
    a thread without a date would never reach the context's open threads."""
    text = "\n".join(r[0] for r in db.execute("SELECT text FROM chunks WHERE page_id = ? ORDER BY ord",
                                              (row["id"],)))
    if "[ ]" not in text:
        return []
    return [(task, timeline_iso(due) or row["updated_at"]) for task, due in open_tasks(text)]


def open_threads(engine: Engine, slug: str, timeline: list, world_only: bool,
                 tasks: Sequence[tuple[str, str]] = ()) -> list[dict]:
    """Active commitments about the entity (newest first), then the page's open tasks
    (`- [ ] …`, commitments the page itself keeps, in page order), then recent timeline
    events; ≤3 (docs/protocol.md §3.3)."""
    threads = [
        {"kind": "commitment", "text": f["fact"], "date": f["valid_from"]}
        for f in engine.facts.active_for_entity(slug, world_only, limit=MAX_THREADS, kind="commitment")
    ]
    for text, due in tasks[:max(0, MAX_THREADS - len(threads))]:
        threads.append({"kind": "commitment", "text": text, "date": due})
    cutoff = (engine.clock.now() - _dt.timedelta(days=RECENT_EVENT_DAYS)).date().isoformat()
    for entry in timeline:
        if len(threads) >= MAX_THREADS:
            break
        if entry["date"][:10] >= cutoff:
            threads.append({"kind": "recent_event", "text": entry["summary"], "date": timeline_iso(entry["date"])})
    return threads


def edges(db: sqlite3.Connection, pid: int, world_only: bool) -> list[dict]:
    """≤10 typed links, outgoing first; resolved links only, one per (type, direction, page)."""
    vis = " AND p.visibility != 'private'" if world_only else ""
    out_rows = db.execute(
        "SELECT l.type, l.context, p.slug FROM links l JOIN pages p ON p.id = l.to_id "
        f"WHERE l.from_id = ? AND l.to_id != l.from_id AND l.source != 'mentions'{vis} "
        "ORDER BY l.id LIMIT 60", (pid,)).fetchall()
    in_rows = db.execute(
        "SELECT l.type, l.context, p.slug FROM links l JOIN pages p ON p.id = l.from_id "
        f"WHERE l.to_id = ? AND l.from_id != l.to_id AND l.source != 'mentions'{vis} "
        "ORDER BY l.id DESC LIMIT 60", (pid,)).fetchall()
    out: list[dict] = []
    seen: set[tuple] = set()
    for direction, rows in (("out", out_rows), ("in", in_rows)):
        # a plain mention of a page that a typed link already names says nothing new
        typed = {r["slug"] for r in rows if r["type"] and r["type"] != "mentions"}
        for r in rows:
            key = (r["type"], direction, r["slug"])
            if key in seen or ((r["type"] or "mentions") == "mentions" and r["slug"] in typed):
                continue
            seen.add(key)
            out.append({"type": r["type"] or "mentions", "direction": direction, "slug": r["slug"],
                        "context": clip(r["context"], CONTEXT_MAX) or None})
            if len(out) >= MAX_EDGES:
                return out
    return out


def backlink_count(db: sqlite3.Connection, pid: int, world_only: bool) -> int:
    """Distinct other pages linking here (bare-name mentions excluded)."""
    if world_only:
        sql = ("SELECT COUNT(DISTINCT l.from_id) FROM links l JOIN pages p ON p.id = l.from_id "
               "WHERE l.to_id = ? AND l.from_id != l.to_id AND l.source != 'mentions' "
               "AND p.visibility != 'private'")
    else:
        sql = ("SELECT COUNT(DISTINCT from_id) FROM links "
               "WHERE to_id = ? AND from_id != to_id AND source != 'mentions'")
    return int(db.execute(sql, (pid,)).fetchone()[0])


def threads_for(engine: Engine, row: sqlite3.Row, world_only: bool) -> list[dict]:
    """Just the open threads of a resolved page (what delta's thread arm needs)."""
    return open_threads(engine, row["slug"], recent_timeline(engine.page_db, row["id"]), world_only,
                        page_tasks(engine.page_db, row))


# -- the entity verb's lookup ------------------------------------------------

def lookup(engine: Engine, name: str, world_only: bool) -> dict:
    """`{found, card?, suggestions?}` for a name, per §3.3 (no latency, no version)."""
    rows = resolve(engine.page_db, name, world_only)
    if rows:
        body: dict = {"found": True, "card": build_card(engine, rows[0], world_only)}
        runners = rows[1 : 1 + MAX_RUNNERS_UP]
        if runners:
            body["suggestions"] = [
                {"slug": r["slug"], "title": r["title"] or r["slug"], "create_safety": "exists"} for r in runners
            ]
        return body
    card = facts_only_card(engine, name, world_only)
    if card is not None:
        return {"found": True, "card": card}
    return {"found": False, "suggestions": near_misses(engine, name, world_only)}


def facts_only_card(engine: Engine, name: str, world_only: bool) -> dict | None:
    """A card for an entity that has facts filed under it but no page, or None.

    The name canonicalizes the way remember files it (docs/protocol.md §4.4),
    so `people/me` finds the facts saved with `--entity people/me`. Page-only
    fields stay empty; the summary says where the facts are, never what they say.
    """
    slug = engine.canonical_entity(name.strip()[:MAX_NAME], WORLD if world_only else Caller.local())
    count = engine.facts.count_active_for_entity(slug, world_only, cap=ACTIVE_FACT_CAP) if slug else 0
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
        hits, _degraded = engine.search_pages(name.strip()[:MAX_NAME], MAX_RUNNERS_UP, caller, keyword_only=True)
        hits = [h for h in hits if h.get("slug")][:MAX_RUNNERS_UP]
        if world_only and hits:
            # the search already hides private pages; check again, cheaply,
            # because a stale search document must never leak one
            slugs = [h["slug"] for h in hits]
            private = {r[0] for r in engine.page_db.execute(
                f"SELECT slug FROM pages WHERE slug IN ({_marks(slugs)}) AND visibility = 'private'", slugs)}
            hits = [h for h in hits if h["slug"] not in private]
        out = []
        for h in hits:
            # at best a probable match, since the name itself resolved to no page
            safety = "probable" if h.get("create_safety") in ("exists", "probable") else "unknown"
            out.append({"slug": h["slug"], "title": h.get("title") or h["slug"], "create_safety": safety})
        return out
    except Exception:
        log.debug("near-miss search failed for %r", name, exc_info=True)
        return []

