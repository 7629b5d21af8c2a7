"""Links between pages: finding them in a page, and resolving them Obsidian's way.

Forms found: `[[T]]`, `[[T|label]]`, `[[T#heading]]`, `![[embed]]`, Markdown
links to `.md` files, inline fields `key:: [[T]]` (typed by the key) and
frontmatter keys whose value is a wikilink (typed by the key). Each link
keeps the text as written plus a slug-shaped key; resolution matches the key
against page slugs: exact path, then a unique basename, then the shortest
path among the pages that share the basename. A link written on an open task's
line (`- [ ] send [[Priya Raman]] the contract`, tasks.py) carries that task,
so the task reaches the card of the page it links (docs/architecture.md,
"Open tasks").
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from .fences import lines_and_mask, prose_lines
from .frontmatter import MAX_FRONTMATTER_ITEMS
from .slugs import path_to_slug
from .tasks import task_on_line

DEFAULT_TYPE = "mentions"
CONTEXT_CHARS = 200

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# [label](href "title") with an optional <...> href; nested brackets in the
# label are rare enough to ignore
_MDLINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# Dataview inline fields: a whole line `key:: value`, or `[key:: value]` /
# `(key:: value)` inside a line
_LINE_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?([\w][\w \-/]{0,60}?)(?:\*\*)?::\s*(.*)$")
_BRACKET_FIELD = re.compile(r"[\[(]([\w][\w \-]{0,60}?)::\s*((?:\[\[[^\]\n]*\]\]|[^\])\n])*)[\])]")
# files Obsidian links to that are not pages
_ATTACHMENT = re.compile(
    r"\.(png|jpe?g|gif|webp|svg|bmp|tiff?|avif|heic|pdf|mp3|wav|m4a|ogg|flac|webm|mp4|mov|mkv|avi|"
    r"canvas|excalidraw|base|csv|zip|docx?|xlsx?|pptx?|txt|json|html?)$",
    re.IGNORECASE,
)
# keys whose wikilink values are not relationships
_NOT_EDGE_KEYS = {"title", "aliases", "alias", "tags", "tag", "type", "visibility", "summary", "slug", "cssclasses"}


@dataclass(slots=True)
class Link:
    target: str          # as written, e.g. "Alice Example" or "../people/alice.md"
    key: str             # slug-shaped, resolved against page slugs; "" = cannot resolve
    type: str            # link type: "mentions" or the field key (works_at, ...)
    source: str          # wikilink | markdown | frontmatter | inline-field
    context: str | None  # the line the link sits on
    task: str | None = None  # the open task on that line, as written (None: not on a task line)
    due: str | None = None   # that task's due date, YYYY-MM-DD

    @property
    def tail(self) -> str:
        return self.key.rsplit("/", 1)[-1]


def link_type(key: str) -> str:
    """A field name as a link type: "Works At" → "works_at"."""
    t = re.sub(r"[\s\-]+", "_", key.strip().lower())
    return re.sub(r"[^\w/]", "", t) or DEFAULT_TYPE


def target_key(target: str, source_dir: str = "") -> str:
    """The slug a link points at; relative paths resolve from the linking page's folder."""
    t = target.strip().replace("\\", "/")
    if t.startswith("./") or t.startswith("../"):
        joined = posixpath.normpath(posixpath.join(source_dir, t))
        if joined == ".." or joined.startswith("../"):
            return ""  # points outside the vault
        t = joined
    return _slug_of(t.lstrip("/"))


# the same few thousand names are linked over and over across a vault
_slug_of = lru_cache(maxsize=1 << 16)(path_to_slug)


def _split_wikilink(inner: str) -> str:
    """`T#heading|label` → `T` (the page part)."""
    inner = inner.replace("\\|", "|")
    page = inner.split("|", 1)[0]
    page = page.split("#", 1)[0]
    page = page.split("^", 1)[0]
    return page.strip()


def _context(line: str) -> str | None:
    text = " ".join(line.split())
    if not text:
        return None
    return text if len(text) <= CONTEXT_CHARS else text[: CONTEXT_CHARS - 1] + "…"


def _wikilink(inner: str, ltype: str, source: str, context: str | None, source_dir: str) -> Link | None:
    # only relative links depend on where they are written; the rest repeat
    # across the vault and are worked out once
    target = _wikilink_target(inner, source_dir) if "./" in inner else _cached_target(inner)
    if target is None:
        return None
    return Link(target[0], target[1], ltype, source, context)


def _wikilink_target(inner: str, source_dir: str = "") -> tuple[str, str] | None:
    """(page part, key) of a wikilink's inner text; None for a heading of this page or a picture."""
    page = _split_wikilink(inner)
    if not page or _ATTACHMENT.search(page):
        return None
    return page, target_key(page, source_dir)


_cached_target = lru_cache(maxsize=1 << 16)(_wikilink_target)


def body_links(body: str, source_rel_path: str) -> list[Link]:
    """Every page link in a body, in reading order, code excluded."""
    source_dir = posixpath.dirname(source_rel_path.replace("\\", "/"))
    links: list[Link] = []
    raw_lines = lines_and_mask(body)[0]
    for i, line in prose_lines(body):
        if "[" not in line and "::" not in line:
            continue
        first = len(links)
        context = _context(line)
        typed_spans = []
        for ltype, start, end in _inline_fields(line):
            for m in _WIKILINK.finditer(line, start, end):
                link = _wikilink(m.group(2), ltype, "inline-field", context, source_dir)
                if link:
                    links.append(link)
            typed_spans.append((start, end))
        for m in _WIKILINK.finditer(line):
            if any(s <= m.start() < e for s, e in typed_spans):
                continue
            link = _wikilink(m.group(2), DEFAULT_TYPE, "wikilink", context, source_dir)
            if link:
                links.append(link)
        if "](" in line:
            stripped = _WIKILINK.sub(lambda m: " " * len(m.group(0)), line)
            for m in _MDLINK.finditer(stripped):
                link = _markdown_link(m.group(3), context, source_dir)
                if link:
                    links.append(link)
        if len(links) > first:
            # the task as written: inline code, blanked for finding links, is part of its text
            task = task_on_line(raw_lines[i])
            if task:
                for link in links[first:]:
                    link.task, link.due = task
    return links


def _inline_fields(line: str) -> list[tuple[str, int, int]]:
    """(type, value start, value end) for each Dataview field on the line."""
    out: list[tuple[str, int, int]] = []
    if "::" not in line:
        return out
    m = _LINE_FIELD.match(line)
    if m and "[[" not in m.group(1):
        out.append((link_type(m.group(1)), m.start(2), m.end(2)))
        return out
    for m in _BRACKET_FIELD.finditer(line):
        out.append((link_type(m.group(1)), m.start(2), m.end(2)))
    return out


def _markdown_link(href: str, context: str | None, source_dir: str) -> Link | None:
    if href.startswith("<") and href.endswith(">"):
        href = href[1:-1]
    if _SCHEME.match(href) or href.startswith("#"):
        return None  # a web address, mailto:, or an anchor on this page
    path = unquote(href.split("#", 1)[0])
    if not path.lower().endswith(".md"):
        return None
    return Link(path, target_key(path, source_dir), DEFAULT_TYPE, "markdown", context)


def frontmatter_links(data: dict, source_rel_path: str) -> list[Link]:
    """Frontmatter keys whose values are wikilinks become edges typed by the key."""
    source_dir = posixpath.dirname(source_rel_path.replace("\\", "/"))
    links: list[Link] = []
    for key, value in data.items():
        if not isinstance(key, str) or key.strip().lower() in _NOT_EDGE_KEYS:
            continue
        ltype = link_type(key)
        for inner in _wikilink_values(value):
            link = _wikilink(inner, ltype, "frontmatter", None, source_dir)
            if link:
                links.append(link)
                if len(links) >= MAX_FRONTMATTER_ITEMS:   # a hostile block's count is bounded too
                    return links
    return links


def _wikilink_values(value, depth: int = 0) -> list[str]:
    """Wikilink targets inside a frontmatter value.

    `key: "[[Acme]]"` is a string; unquoted `key: [[Acme]]` is YAML for a
    list holding a list holding "Acme" — Obsidian users write both.
    """
    if depth > 3:
        return []
    if isinstance(value, str):
        return [m.group(2) for m in _WIKILINK.finditer(value)]
    if isinstance(value, list):
        if depth >= 1 and len(value) == 1 and isinstance(value[0], str) and "[[" not in value[0]:
            inner = value[0]
            # [[Acme]] parsed as [["Acme"]]: the inner list is the link
            return [inner] if inner.strip() else []
        out: list[str] = []
        for v in value:
            out.extend(_wikilink_values(v, depth + 1))
        return out
    return []


class LinkResolver:
    """Resolve link keys against a set of pages (id, slug, tail)."""

    def __init__(self, pages: Iterable[Sequence[Any]]):
        self.by_slug: dict[str, int] = {}
        self.by_tail: dict[str, list[tuple[str, int]]] = {}
        for pid, slug, tail in pages:
            self.by_slug[slug] = pid
            self.by_tail.setdefault(tail, []).append((slug, pid))

    def resolve(self, key: str) -> int | None:
        """The page id a link key points at, or None when unresolved."""
        if not key:
            return None
        hit = self.by_slug.get(key)
        if hit is not None:
            return hit
        tail = key.rsplit("/", 1)[-1]
        candidates = self.by_tail.get(tail)
        if not candidates:
            return None
        if "/" in key:
            # a partial path matches pages whose path ends with it
            suffix = "/" + key
            candidates = [c for c in candidates if c[0].endswith(suffix)]
            if not candidates:
                return None
        if len(candidates) == 1:
            return candidates[0][1]
        # ambiguous basename: the page nearest the vault root wins
        return min(candidates, key=lambda c: (c[0].count("/"), len(c[0]), c[0]))[1]
