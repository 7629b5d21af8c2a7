"""Human output for the verb commands (the JSON envelope is `--json`)."""

from __future__ import annotations

import datetime as _dt
import sys

from ..indexer.search_modes import KEYWORD_ONLY, KEYWORD_ONLY_TEXT


def error(body: dict) -> None:
    print(f"error ({body.get('error')}): {body.get('message')}", file=sys.stderr)
    if body.get("suggestion"):
        print(f"fix: {body['suggestion']}", file=sys.stderr)
    if body.get("detail"):
        print(f"detail: {body['detail']}", file=sys.stderr)


def age(ts: str | None) -> str:
    if not ts:
        return "?"
    try:
        t = _dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts
    secs = (_dt.datetime.now(_dt.timezone.utc) - t).total_seconds()
    if secs < 0:
        return "in the future"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit} ago"
    return "just now"


def fact_line(f: dict) -> str:
    parts = [f"#{f['id']:<5}", f"{f['kind']:<10}"]
    parts.append(f"[{f['entity_slug']}]" if f.get("entity_slug") else "[-]")
    parts.append(f["fact"])
    tail = f"({age(f.get('valid_from') or f.get('created_at'))}, {f.get('provenance')}"
    if f.get("visibility") == "private":
        tail += ", private"
    if f.get("expired_at"):
        tail += ", expired"
    elif f.get("valid_until"):
        tail += f", until {f['valid_until'][:10]}"
    return "  ".join(parts) + "  " + tail + ")"


def show(verb: str, body: dict) -> None:
    fn = _RENDERERS.get(verb)
    if fn is None:
        import json

        print(json.dumps(body, indent=2, ensure_ascii=False))
        return
    fn(body)


def _remember(b: dict) -> None:
    print(b["status_text"] + (f"  [{b['entity_slug']}]" if b.get("entity_slug") else ""))
    if b.get("valid_until"):
        print(f"  valid until {b['valid_until']}")


# the protocol's evidence and degradation codes, in words a person reads
_EVIDENCE = {"alias_hit": "alias match", "exact_title_match": "title match", "high_vector_match": "close in meaning",
             "keyword_exact": "keyword match", "weak_semantic": "weak match"}
_DEGRADED = {KEYWORD_ONLY: KEYWORD_ONLY_TEXT}


def _recall(b: dict) -> None:
    facts = b.get("facts", [])
    results = b.get("results")
    if results is not None:  # a query: facts are the most recent ones, pages are the matches
        print(f"recent facts ({len(facts)}):" if facts else "recent facts: none")
    elif not facts:
        print("no facts found")
    for f in facts:
        print(fact_line(f))
    if results is not None:
        print()
        degraded = f"  ({_DEGRADED.get(b['search_degraded'], b['search_degraded'])})" if b.get("search_degraded") else ""
        print((f"pages matching the query ({len(results)}):" if results else "pages matching the query: none")
              + degraded)
        for r in results:
            stale = "  (changed on disk since indexed)" if r.get("stale") else ""
            evidence = _EVIDENCE.get(r.get("evidence"), r.get("evidence"))
            print(f"  {r['slug']}  — {r.get('title') or ''}  [{evidence}]{stale}")
            chunk = (r.get("chunk") or "").strip().replace("\n", " ")
            if chunk:
                print(f"      {chunk[:160]}")
    if "budget_tokens" in b:
        print(f"(budget {b['budget_used']}/{b['budget_tokens']} tokens, {b['dropped_count']} dropped)")


def _forget(b: dict) -> None:
    if b["expired"]:
        print(f"forgot fact #{b['id']}" + (f" ({b['reason']})" if b.get("reason") else ""))
    else:
        print(f"fact #{b['id']} was already expired; nothing changed")


def _entity(b: dict) -> None:
    if not b.get("found"):
        print("no such entity" + ("; pages that may be about it:" if b.get("suggestions") else ""))
        for s in b.get("suggestions", []):
            print(f"  {s['slug']}  — {s['title']}")
        if not b.get("suggestions"):
            print("  no page has that slug, title or alias; `brain recall WORDS` searches the pages")
        return
    c = b["card"]
    e = c["entity"]
    print(f"{e['title']}  ({e['slug']}{', ' + e['type'] if e.get('type') else ''})")
    if c.get("aka"):
        print(f"  aka: {', '.join(c['aka'])}")
    if c.get("summary"):
        print(f"  {c['summary']}")
    for t in c.get("open_threads", []):
        print(f"  [{t['kind']}] {t['text']}" + (f" ({t['date'][:10]})" if t.get("date") else ""))
    for ed in c.get("edges", []):
        arrow = "→" if ed["direction"] == "out" else "←"
        print(f"  {arrow} {ed['type']} {ed['slug']}")
    print(f"  {c['backlink_count']} backlinks, {c['active_fact_count']} active facts, {b['latency_ms']} ms")
    for s in b.get("suggestions", []):
        print(f"  also: {s['slug']} ({s['title']})")


def _text_block(b: dict) -> None:
    if b.get("text"):
        print(b["text"])
    elif "pages" in b:
        fresh = age(b.get("since")) == "just now"
        # a new session's first call only sets its cursor: say so, or it reads like an empty vault
        print(f"no changes since {b.get('since')}" + (" (the first run of a new --session only marks where "
                                                      "it starts)" if fresh else ""))
    else:
        print("(nothing to show)")
    if b.get("unresolved"):
        print(f"(no page for: {', '.join(b['unresolved'])})")
    if "budget_tokens" in b:
        print(f"(budget {b['budget_used']}/{b['budget_tokens']} tokens, {b['dropped_count']} dropped)")
    if b.get("has_more"):
        cur = b.get("next_cursor") or {}
        print(f"(more changes waiting: run again, or pass --since {cur.get('since')}"
              + (f" --since-slug {cur['slug']})" if cur.get("slug") else ")"))


_RENDERERS = {
    "remember": _remember,
    "recall": _recall,
    "forget": _forget,
    "entity": _entity,
    "context_pack": _text_block,
    "delta": _text_block,
}
