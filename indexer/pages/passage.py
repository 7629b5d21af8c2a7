"""The passage a search result shows: the lines around the best-matching sentence.

A chunk can be 1,500 characters; a reader (and an agent paying by the
token) wants the two or three lines that answer the query. The passage is
always a verbatim slice of the chunk text, so a renderer can find the query
terms in it again and a caller can find it in the page.
"""

from __future__ import annotations

import re

from .keyword import TermFinder

MAX_CHARS = 240
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _units(text: str) -> list[tuple[int, int, int]]:
    """(start, end, paragraph number) of each non-blank line; a long line is cut at its sentence ends."""
    spans: list[tuple[int, int, int]] = []
    pos = para = 0
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        if not line.strip():
            para += 1
            continue
        if end - start <= MAX_CHARS:
            spans.append((start, end, para))
            continue
        cut = start
        for m in _SENTENCE.finditer(line):
            spans.append((cut, start + m.start(), para))
            cut = start + m.end()
        spans.append((cut, end, para))
    return spans


def best_passage(text: str, finder: TermFinder, max_chars: int = MAX_CHARS) -> str:
    """The line (or sentence) of `text` that holds the most query terms, widened with its
    neighbours up to `max_chars`; the opening lines when no line holds any."""
    text = text or ""
    if len(text) <= max_chars:
        return text.strip()
    units = _units(text)
    if not units:
        return ""
    scores = [len(finder.found(text[s:e])) if finder.any(text[s:e]) else 0 for s, e, _ in units]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    lo = hi = best
    start, end, para = units[best]
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
    return text[units[lo][0]:units[hi][1]].strip()


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
