"""The passage a search result shows: the lines around the best-matching sentence.

A chunk can be 1,500 characters; a reader (and an agent paying by the
token) wants the two or three lines that answer the query. The passage is
made of verbatim lines of the chunk, so a renderer can find the query terms
in it again and a caller can find it in the page: a slice of the chunk, and
for a table row the table's header and separator lines above it (a row of
cells means nothing without its column names). A match inside a fenced code
block shows the whole block, fences included, when it fits; list lines keep
their bullets. Lines are scored by the query words they hold, each weighted
by how telling it is (a rare word like "restore" outweighs "note").
"""

from __future__ import annotations

import re

from .terms import TermFinder
from ..vault.fences import code_mask

MAX_CHARS = 240
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _units(lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(start, end, paragraph number, line number) of each non-blank line; a long line is cut
    at its sentence ends."""
    spans: list[tuple[int, int, int, int]] = []
    pos = para = 0
    for n, line in enumerate(lines):
        start, end = pos, pos + len(line)
        pos = end + 1
        if not line.strip():
            para += 1
            continue
        if end - start <= MAX_CHARS:
            spans.append((start, end, para, n))
            continue
        cut = start
        for m in _SENTENCE.finditer(line):
            spans.append((cut, start + m.start(), para, n))
            cut = start + m.end()
        spans.append((cut, end, para, n))
    return spans


def best_passage(text: str, finder: TermFinder, max_chars: int = MAX_CHARS,
                 weights: dict[str, float] | None = None) -> str:
    """The line (or sentence) of `text` that holds the most of the query (each term counted by
    its `weight`, 1 when not given), widened with its neighbours up to `max_chars`; the opening
    lines when no line holds any."""
    text = text or ""
    if len(text) <= max_chars:
        return text.strip()
    lines = text.split("\n")
    units = _units(lines)
    if not units:
        return ""
    weigh = (lambda found: sum(weights.get(t, 1.0) for t in found)) if weights else len
    scores = [weigh(finder.found(text[s:e])) if finder.any(text[s:e]) else 0 for s, e, _, _ in units]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    lo = hi = best
    start, end, para, line_no = units[best]
    mask = code_mask(lines)
    if mask[line_no]:
        block = _code_block(lines, mask, line_no)
        if len(block) <= max_chars:
            return block
    if end - start > max_chars:
        return _window(text[start:end], finder, max_chars)
    # widen inside the paragraph: the line before first (it usually introduces the match), then the one after
    while True:
        grew = False
        if lo > 0 and units[lo - 1][2] == para and units[hi][1] - units[lo - 1][0] <= max_chars:
            lo -= 1
            grew = True
        if hi + 1 < len(units) and units[hi + 1][2] == para and units[hi + 1][1] - units[lo][0] <= max_chars:
            hi += 1
            grew = True
        if not grew:
            break
    # never open mid-sentence on a line the match does not need (the tail of a wrapped bullet)
    while lo < best and _continues(text, units[lo][0]):
        lo += 1
    passage = text[units[lo][0]:units[hi][1]].strip()
    header = _table_header(lines, units[lo][3]) if not mask[line_no] else []
    return "\n".join([*header, passage]) if header else passage


def _is_row(line: str) -> bool:
    s = line.strip()
    return s.startswith("|") and s.count("|") >= 2


def _table_header(lines: list[str], first: int) -> list[str]:
    """The header and separator lines of the table whose row `first` is, when the passage
    starts below them; [] when `first` is no table row or is the header itself."""
    if not _is_row(lines[first]):
        return []
    top = first
    while top > 0 and _is_row(lines[top - 1]):
        top -= 1
    if first <= top + 1:   # the passage already opens at the header or its separator
        return [] if first == top else [lines[top]]
    return [lines[top].strip(), lines[top + 1].strip()]


def _code_block(lines: list[str], mask: list[bool], at: int) -> str:
    """The fenced block around line `at`, fences included."""
    lo = hi = at
    while lo > 0 and mask[lo - 1]:
        lo -= 1
    while hi + 1 < len(lines) and mask[hi + 1]:
        hi += 1
    return "\n".join(lines[lo:hi + 1]).strip()


def _continues(text: str, start: int) -> bool:
    """Whether the line at `start` carries on the one before (it opens with a lowercase word)."""
    head = text[start:start + 40].lstrip()
    return bool(head) and head[0].islower()


def _window(unit: str, finder: TermFinder, max_chars: int) -> str:
    """A word-aligned slice of one over-long sentence, starting a little before its first match."""
    first = finder.first(unit)
    start = unit.rfind(" ", 0, max(0, first - max_chars // 4)) + 1 if first > max_chars // 4 else 0
    end = start + max_chars
    if end < len(unit):
        space = unit.rfind(" ", start, end)
        end = space if space > start else end
    return unit[start:end].strip()
