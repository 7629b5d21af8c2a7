"""Where a person reading a page would see a `visibility` key, whatever YAML made of it.

Privacy decides from what a person would read (docs/architecture.md,
"Private pages"): a `visibility` line before, inside or after a malformed
or misplaced block, nested under another key, with invisible characters in
it, in odd case or spacing, or between CR-only line breaks, is a mark the
owner meant. This module finds those lines in a page's head; the frontmatter
module decides what they mean.
"""

from __future__ import annotations

import re
import unicodedata

# the head is read up to here at most: the frontmatter bound, so a page's
# privacy never depends on what follows a block the parser would refuse
HEAD_BYTES = 64 * 1024

# format characters (zero-width space and joiners, soft hyphen, BOM, word
# joiner, bidi marks) are invisible: `vis\u200bibility` reads as `visibility`
_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb]")
# a key at the start of a line, after indentation, quote, list, comment or
# quote-block marks and any dotted path (`meta.visibility:`), or inside a
# flow mapping (`meta: {visibility: private}`)
_KEY_AT_START = re.compile(r"^[^\w`]*(?:[\w-]+\.)*visibility[\"'\]\s]*[:=]")
_KEY_IN_FLOW = re.compile(r"[{,]\s*[\"']?(?:[\w-]+\.)*visibility[\"'\s]*:")
# what ends the head, outside a `---` region: the first heading or code fence
_RULE = re.compile(r"^\s*(?:-{3,}|\.{3})\s*$")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
# the one form that is the frontmatter's own top-level key
_PLAIN_KEY = re.compile(r"^[\"']?visibility[\"']?[ \t]*:", re.IGNORECASE)


def readable(line: str) -> str:
    """A line as a person reads it: invisible characters dropped, compatibility forms folded, any case."""
    if line.isascii():
        return line.lower()
    # each step only when needed: the checks cost a fraction of the rewrites, and nearly all text needs none
    seen = _INVISIBLE.sub("", line) if _INVISIBLE.search(line) else line
    if not unicodedata.is_normalized("NFKC", seen):
        seen = unicodedata.normalize("NFKC", seen)
    return seen.lower()


def reads_as_visibility_key(line: str) -> bool:
    """Whether a person would read this line as setting a page's visibility."""
    seen = readable(line)
    return "visibility" in seen and bool(_KEY_AT_START.match(seen) or _KEY_IN_FLOW.search(seen))


def visibility_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, line) for each line of the page's head that reads as a `visibility` key.

    The head runs from the first line to the first heading or code fence that
    is not between an odd and an even `---` line (inside a block `#` starts
    a YAML comment), and at most HEAD_BYTES. Every line break a viewer shows
    counts, CR alone included.
    """
    head = text[:HEAD_BYTES]
    if "visibility" not in readable(head):
        return []   # nearly every page: nothing to look at line by line
    found: list[tuple[int, str]] = []
    rules = 0
    for n, line in enumerate(head.splitlines(), start=1):
        if reads_as_visibility_key(line):
            found.append((n, line))
        if _RULE.match(line):
            rules += 1
        elif rules % 2 == 0 and (_HEADING.match(line) or _FENCE.match(line)):
            break
    return found


def is_plain_key(line: str) -> bool:
    """Whether a line inside a well-formed block is its top-level `visibility:` key, written plainly."""
    return bool(_PLAIN_KEY.match(line)) and line.isascii()
