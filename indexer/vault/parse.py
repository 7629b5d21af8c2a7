"""One Markdown file → everything the page tables hold about it.

Title: frontmatter `title` → first H1 outside code → the file name as written
(`Obsidian for iOS and iPadOS.md` → `Obsidian for iOS and iPadOS`, as the vault
shows it). Aliases keep their case for display; the alias table keys them
lowercased for lookups.
Type: frontmatter `type` → the folder (people/ → person, …) → none.
Parsing is pure: text in, ParsedPage out; nothing here touches the disk.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from .chunks import Chunk, page_card, split_chunks
from .fences import prose_lines
from .frontmatter import leading_block, page_visibility, scalar_text, split_frontmatter, split_tags
from .slugs import path_to_slug, split_aliases
from .timeline import Entry, extract_entries, split_timeline
from .wikilinks import Link, body_links, frontmatter_links

LEAD_CHARS = 160

# folder name → page type (docs/protocol.md §8.3); the nearest folder decides
FOLDER_TYPES = {
    "people": "person", "person": "person",
    "companies": "company", "company": "company",
    "projects": "project", "project": "project",
    "meetings": "meeting", "meeting": "meeting",
    "notes": "note", "deals": "deal", "writing": "writing", "concepts": "concept",
    "sources": "source", "media": "media", "emails": "email", "slack": "slack",
    "cal": "calendar-event", "calendar": "calendar-event", "events": "event", "diary": "diary",
}

_H1 = re.compile(r"^[ ]{0,3}#[ \t]+(.*?)[ \t]*#*[ \t]*$")
_INLINE_TAG = re.compile(r"(?:(?<=\s)|^)#([^\s#\[\]{}(),.;:!?\"'`|\\]*[^\W\d][^\s#\[\]{}(),.;:!?\"'`|\\]*)")
_SKIP_LEAD = re.compile(r"^\s*(?:#|<!--|\||>|\[\^|%%|-{3,}\s*$|\*{3,}\s*$|_{3,}\s*$)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass
class ParsedPage:
    rel_path: str
    slug: str
    tail: str
    title: str
    title_key: str
    type: str | None
    visibility: str
    summary: str | None
    lead: str
    aliases: list[str]
    tags: list[str]
    frontmatter: dict
    frontmatter_error: str | None
    visibility_doubt: str | None = None   # why it is private without saying `visibility: private`
    links: list[Link] = field(default_factory=list)
    timeline: list[Entry] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)


def infer_type(slug: str) -> str | None:
    """The page type its folder implies, or None."""
    folders = slug.split("/")[:-1]
    for folder in reversed(folders):
        t = FOLDER_TYPES.get(folder)
        if t:
            return t
    return None


def first_h1(body: str) -> str | None:
    for _, line in prose_lines(body):
        if line.startswith(("#", " ")):
            m = _H1.match(line)
            if m and m.group(1).strip():
                return " ".join(m.group(1).split())
    return None


def lead_sentence(body: str) -> str:
    """The first prose sentence: headings, comments, tables, code and rules skipped."""
    in_comment = False
    for _, line in prose_lines(body):
        s = line.strip()
        if in_comment:
            if "-->" in s:
                in_comment = False
            continue
        if not s:
            continue
        if s.startswith("<!--") and "-->" not in s:
            in_comment = True
            continue
        if _SKIP_LEAD.match(s):
            continue
        text = _LIST_MARK.sub("", s)
        text = " ".join(re.sub(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]",
                               lambda m: (m.group(2) or m.group(1)).strip(), text).split())
        m = _SENTENCE_END.search(text)
        if m:
            text = text[: m.end()]
        if not text:
            continue
        return text if len(text) <= LEAD_CHARS else text[: LEAD_CHARS - 1] + "…"
    return ""


def inline_tags(body: str) -> list[str]:
    out: list[str] = []
    for _, line in prose_lines(body):
        if "#" not in line or line.lstrip().startswith("#") and _H1.match(line.lstrip()):
            continue
        for m in _INLINE_TAG.finditer(line):
            tag = m.group(1).lower().rstrip("/-")
            if tag and tag not in out:
                out.append(tag)
    return out


def parse_page(rel_path: str, text: str) -> ParsedPage:
    """Parse one page; never raises on odd content."""
    rel_path = rel_path.replace("\\", "/")
    slug = path_to_slug(rel_path)
    fm = split_frontmatter(text)
    data = fm.data
    body = fm.body
    stem = posixpath.basename(rel_path)
    stem = re.sub(r"\.(md|mdx|markdown)$", "", stem, flags=re.IGNORECASE)
    title = scalar_text(data.get("title")) or first_h1(body) or stem.strip() or slug
    ptype = scalar_text(data.get("type"))
    ptype = ptype.lower() if ptype else infer_type(slug)
    visibility, visibility_doubt = page_visibility(fm)
    summary = scalar_text(data.get("summary"))
    aliases = split_aliases(data.get("aliases", data.get("alias")))
    tags = split_tags(data.get("tags", data.get("tag")))
    for t in inline_tags(body):
        if t not in tags:
            tags.append(t)
    compiled, _ = split_timeline(body)
    lead = lead_sentence(compiled)
    about = summary or scalar_text(data.get("description"))
    links = frontmatter_links(data, rel_path) + body_links(body, rel_path)
    return ParsedPage(
        rel_path=rel_path,
        slug=slug,
        tail=slug.rsplit("/", 1)[-1],
        title=title,
        title_key=title.lower(),
        type=ptype,
        visibility=visibility,
        summary=summary,
        lead=lead,
        aliases=aliases,
        tags=tags,
        frontmatter=data,
        frontmatter_error=fm.error,
        visibility_doubt=visibility_doubt,
        links=links,
        timeline=extract_entries(body),
        chunks=[page_card(title, about, lead), *split_chunks(body)],
    )


def parse_stub(rel_path: str, head: str) -> ParsedPage:
    """A page too large to parse, from its first bytes: name and frontmatter, no text, links or timeline.

    docs/architecture.md "Hostile content". A block that does not close
    within `head` cannot be read, so the page is private until it is split.
    """
    block = leading_block(head)
    page = parse_page(rel_path, block or "")
    if block is None:
        page.visibility = "private"
        page.frontmatter_error = "its frontmatter does not close within the part of the file that is read"
    elif page.visibility == "world":
        # a visibility line outside the block is in the head, not in `block`
        page.visibility, page.visibility_doubt = page_visibility(split_frontmatter(head))
    page.lead, page.chunks, page.timeline = "", [], []
    return page
