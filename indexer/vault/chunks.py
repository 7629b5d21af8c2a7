"""Chunks: a page body cut at its headings into pieces of bounded length.

One chunk is one keyword document and one vector. A chunk's hash covers its
heading and text, so an edit elsewhere in the page leaves it (and its
embedding) untouched. Each chunk also knows its heading path — the headings
above it, outermost first (`Ledger v2`, `Design notes`) — which the keyword
index searches as a field of its own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .fences import lines_and_mask

MAX_CHARS = 1500   # long enough for a paragraph or two, short enough for a 384-d vector
CARD_ORD = -1      # the page card's place: ahead of the body's chunks (0, 1, ...)
_HEADING = re.compile(r"^[ ]{0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")


@dataclass(slots=True)
class Chunk:
    ord: int
    heading: str | None
    text: str
    hash: str
    heading_path: str = ""   # the headings above and at this chunk, outermost first, one per line


def chunk_hash(heading: str | None, text: str) -> str:
    return hashlib.blake2b(f"{heading or ''}\n{text}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def page_card(title: str, about: str | None, lead: str) -> Chunk:
    """The page in a few words: its name, what its frontmatter says it is about, its first sentence.

    A question names what a page is for ("recompile my addons") more often than
    the words inside one of its sections, so the card gets a vector and a
    keyword document of its own (docs/architecture.md, the search arm of recall).
    """
    name = re.sub(r"[-_]+", " ", title or "").strip()
    head = f"{name}: {about.strip()}" if about and about.strip() else name
    text = "\n".join(part for part in (head, (lead or "").strip()) if part)
    return Chunk(CARD_ORD, None, text, chunk_hash(None, text))


def split_chunks(body: str, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """Sections at ATX headings (outside code), each cut to at most `max_chars`.

    A page always gets at least one chunk (possibly empty), so it can be
    found by its title and aliases even when its body is blank.
    """
    lines, mask = lines_and_mask(body)
    sections: list[tuple[str | None, str, list[str]]] = [(None, "", [])]
    stack: list[tuple[int, str]] = []   # (level, heading) of the open sections
    for i, line in enumerate(lines):
        if not mask[i] and line.startswith(("#", " ")):
            m = _HEADING.match(line)
            if m:
                level, heading = len(m.group(1)), m.group(2).strip()
                while stack and stack[-1][0] >= level:
                    stack.pop()
                if heading:
                    stack.append((level, heading))
                sections.append((heading or None, "\n".join(h for _, h in stack), []))
                continue
        sections[-1][2].append(line)
    pieces: list[tuple[str | None, str, str]] = []
    for heading, path, body_lines in sections:
        text = "\n".join(body_lines).strip()
        if not text:
            continue
        for piece in _bounded(text, max_chars):
            pieces.append((heading, path, piece))
    if not pieces:
        pieces.append((None, "", ""))
    return [Chunk(i, h, t, chunk_hash(h, t), path) for i, (h, path, t) in enumerate(pieces)]


def _bounded(text: str, max_chars: int) -> list[str]:
    """Cut at paragraph breaks, then at spaces, never mid-word when avoidable."""
    if len(text) <= max_chars:
        return [text]
    out: list[str] = []
    buf = ""
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if buf and len(buf) + 2 + len(para) <= max_chars:
            buf = f"{buf}\n\n{para}"
            continue
        if buf:
            out.append(buf)
            buf = ""
        while len(para) > max_chars:
            cut = para.rfind(" ", max_chars // 2, max_chars)
            if cut <= 0:
                cut = max_chars
            out.append(para[:cut].rstrip())
            para = para[cut:].lstrip()
        buf = para
    if buf:
        out.append(buf)
    return out
