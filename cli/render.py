"""Human output for the verb commands (the JSON envelope is `--json`).

Colour: on when stdout is a terminal; NO_COLOR (set, not empty) turns it off
everywhere, and FORCE_COLOR (set, not empty, not 0) turns it on for a pipe
(`brain recall … | less -R`). NO_COLOR wins when both are set. `--json` is
never coloured.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import sys
from typing import Callable

from ..indexer.embeddings.search_modes import degraded_text

_STYLES = {"path": "1;36", "title": "1", "hit": "1;33", "dim": "2", "error": "1;31", "fix": "32", "id": "35"}


def colour_on(stream=None) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    forced = os.environ.get("FORCE_COLOR")
    if forced:
        return forced != "0"
    stream = stream or sys.stdout
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str, on: bool | None = None) -> str:
    if not text or not (colour_on() if on is None else on):
        return text
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"


def usage_error(message: str, fix: str) -> None:
    on = colour_on(sys.stderr)
    print(paint("error:", "error", on) + f" {message}", file=sys.stderr)
    print(paint("fix:", "fix", on) + f" {fix}", file=sys.stderr)


# wire words a person never typed, in the words of the command line
_WIRE = ((re.compile(r"`?facts\[\]\.fact_id`? from recall"), "the #id that `brain recall` prints"),
         (re.compile(r"`?facts\[\]\.fact_id`?"), "the #id that `brain recall` prints"),
         (re.compile(r"the `id` that remember returned"), "the number `brain remember` printed"),
         (re.compile(r' \(a number as a string, e\.g\. "42"\)'), ""))


_ENGLISH = {"entity", "entities", "since", "limit", "query", "reason", "kind", "fact", "grep"}


def speak_cli(text: str, cmd=None) -> str:
    """An error text written for agents, with parameter names turned into flags."""
    for pattern, words in _WIRE:
        text = pattern.sub(words, text)
    if cmd is None:
        return text
    from .verb_commands import COMMANDS

    # this command's parameters first; then any other command's underscored one (no English
    # word has an underscore), as when forget's fix says to run recall with include_expired
    others = [o for c in COMMANDS.values() if c is not cmd for o in c.all_opts() if o.param and "_" in o.param]
    for o in [*cmd.all_opts(), *others]:
        if o.param and not o.positional:
            # a plain word that is also English ("since", "limit") is the wire's only when quoted
            quote = "[\"`]" if o.param in _ENGLISH else "[\"`]?"
            text = re.sub(rf'(?<![\w-])({quote}){re.escape(o.param)}\1(?![\w-])', o.names[0], text)
    return text


def error(body: dict, cmd=None) -> None:
    from ..daemon.protocol.errors import GENERIC_PARAM_SUGGESTION

    message = speak_cli(f"{body.get('message')}", cmd)
    fix = body.get("suggestion")
    if fix == GENERIC_PARAM_SUGGESTION or not fix:
        fix = f"run `brain {cmd.name} --help` for its options" if cmd is not None else fix
    on = colour_on(sys.stderr)
    # a verb command speaks in its flags; other callers keep the protocol's error code
    label = "error:" if cmd is not None else f"error ({body.get('error')}):"
    print(paint(label, "error", on) + f" {message}", file=sys.stderr)
    if fix:
        print(paint("fix:", "fix", on) + f" {speak_cli(fix, cmd)}", file=sys.stderr)
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


def when(ts: str | None) -> str:
    """A fact's date as a person reads it: the local date, and the time when it is today."""
    if not ts:
        return "?"
    try:
        t = _dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return ts
    if t.date() == _dt.datetime.now().astimezone().date():
        return "today " + t.strftime("%H:%M")
    return t.strftime("%Y-%m-%d")


def fact_line(f: dict, on: bool | None = None) -> str:
    about = f"[{f['entity_slug']}]  " if f.get("entity_slug") else ""
    kind = "" if f.get("kind") in (None, "fact") else f"{f['kind']}: "
    tail = [when(f.get("valid_from") or f.get("created_at"))]
    if f.get("provenance"):
        tail.append(f"from {f['provenance']}")
    if f.get("visibility") == "private":
        tail.append("private")
    if f.get("expired_at"):
        tail.append("expired")
    elif f.get("valid_until"):
        tail.append(f"until {f['valid_until'][:10]}")
    return (paint(f"#{f['id']:<4}", "id", on) + " " + about + kind + f["fact"]
            + "  " + paint("(" + ", ".join(tail) + ")", "dim", on))


def _remember(b: dict) -> None:
    print(b["status_text"] + (f"  [{b['entity_slug']}]" if b.get("entity_slug") else ""))
    if b.get("valid_until"):
        print(f"  valid until {b['valid_until']}")


_STOP = {"the", "and", "for", "who", "what", "when", "where", "which", "how", "why", "is", "are", "was", "were",
         "with", "about", "from", "that", "this", "does", "did", "our", "my", "of", "to", "in", "on", "a", "an"}


def terms_of(query: str) -> list[str]:
    """The query words worth highlighting, as stems ("leading" finds "lead" and "leads"),
    without stop words or one-letter words."""
    words = [w for w in re.findall(r"\w[\w'-]*", query.lower()) if w not in _STOP and len(w) > 1]
    stems = (re.sub(r"(ing|ed|es|s)$", "", w) for w in words)
    return list(dict.fromkeys(st if len(st) >= 3 else w for st, w in zip(stems, words)))


def highlight(text: str, terms: list[str], on: bool) -> str:
    if not terms or not on:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\w*",
                         re.IGNORECASE)
    return pattern.sub(lambda m: paint(m.group(0), "hit", True), text)


def passage(chunk: str, terms: list[str], width: int, lines: int = 3) -> list[str]:
    """The passage wrapped to the terminal, at most `lines` lines, starting near the first hit."""
    import textwrap

    text = " ".join(chunk.split())
    room = width * lines
    if len(text) > room and terms:
        m = re.search(r"\b(" + "|".join(re.escape(t) for t in terms) + ")", text, re.IGNORECASE)
        if m and m.start() > room // 3:
            start = text.rfind(" ", 0, m.start() - room // 4) + 1
            text = "… " + text[start:]
    out = textwrap.wrap(text, width) or [""]
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: max(0, width - 2)].rstrip() + " …"
    return out


def _width() -> int:
    import shutil

    return max(40, min(shutil.get_terminal_size((100, 24)).columns, 120) - 6)


def _forget(b: dict) -> None:
    if b["expired"]:
        print(f"forgot fact #{b['id']}" + (f" ({b['reason']})" if b.get("reason") else ""))
    else:
        print(f"fact #{b['id']} was already expired; nothing changed")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1}


def related_suggestions(name: str, suggestions: list[dict]) -> list[dict]:
    """A miss's suggestions that share a word with the name a person typed.

    The daemon's near misses come from the page search, which also matches
    page bodies and headings: `people/me` finds companies with a "People"
    section. For the terminal only those named like the name are kept (MCP
    callers get the daemon's list as it is)."""
    wanted = _words(name.rsplit("/", 1)[-1])  # the folder (people/, companies/) names no one
    return [s for s in suggestions
            if wanted & _words(f"{s.get('slug', '').rsplit('/', 1)[-1]} {s.get('title', '')}")]


def _entity(b: dict, args: dict, near: list | None = None, facts: list | None = None) -> None:
    if not b.get("found"):
        named = f" {args['name']!r}" if args.get("name") else ""
        kept = related_suggestions(args.get("name") or "", b.get("suggestions", []))
        options = [(s["slug"], s["title"]) for s in kept] or list(near or [])
        print(f"no such entity{named}" + ("; did you mean:" if options else ""))
        for slug, title in options:
            print(f"  {slug}  — {title}")
        if not options:
            print("  no page has that slug, title or alias; `brain recall WORDS` searches the pages")
        return
    c = b["card"]
    e = c["entity"]
    print(f"{e['title']}  ({e['slug']}{', ' + e['type'] if e.get('type') else ''})")
    if c.get("aka"):
        print(f"  aka: {', '.join(c['aka'])}")
    if facts and (c.get("summary") or "").startswith("No page yet;"):
        print("  No page yet.")  # the summary's count and recall hint: the facts themselves follow
    elif c.get("summary"):
        print(f"  {c['summary']}")
    for t in c.get("open_threads", []):
        on = f" (on {t['page']})" if t.get("page") else ""   # a task written on another page
        print(f"  [{t['kind']}] {t['text']}{on}" + (f" ({t['date'][:10]})" if t.get("date") else ""))
    for ed in c.get("edges", []):
        arrow = "→" if ed["direction"] == "out" else "←"
        print(f"  {arrow} {ed['type']} {ed['slug']}")
    if facts:
        colour = colour_on()
        total = c["active_fact_count"]
        print(f"  facts ({len(facts)} newest of {total}):" if total > len(facts) else f"  facts ({len(facts)}):")
        for f in facts:
            print("    " + fact_line(dict(f, entity_slug=None), colour))  # the card names the entity already
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
        resume = f"--since {cur.get('since')}" + (f" --since-slug {cur['slug']}" if cur.get("slug") else "")
        if b.get("facts_cursor"):
            resume += f" --facts-cursor {b['facts_cursor']}"
        print(f"(more changes waiting: run again with the same --session, or pass {resume})")


# what prints each verb's answer; entity's takes the call's arguments too (answer_view.py)
RENDERERS: dict[str, Callable[..., None]] = {
    "remember": _remember,
    "forget": _forget,
    "entity": _entity,
    "context_pack": _text_block,
    "delta": _text_block,
}
