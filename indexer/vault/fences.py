"""Which lines of a Markdown body are code, so parsers can skip them.

A `[[link]]`, a `# heading` or a dated bullet inside a fenced code block is
an example, not content; every parser in this package asks this module first.
"""

from __future__ import annotations

import re
from functools import lru_cache

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def code_mask(lines: list[str]) -> list[bool]:
    """True for each line inside a fenced code block (fence lines included)."""
    mask = [False] * len(lines)
    fence_char = ""
    fence_len = 0
    for i, line in enumerate(lines):
        if "`" not in line and "~" not in line and not fence_char:
            continue
        m = _FENCE.match(line)
        if fence_char:
            mask[i] = True
            if m and m.group(1)[0] == fence_char and len(m.group(1)) >= fence_len and not m.group(2).strip():
                fence_char = ""
            continue
        if m:
            # a backtick fence's info string may not contain backticks
            if m.group(1)[0] == "`" and "`" in m.group(2):
                continue
            fence_char, fence_len = m.group(1)[0], len(m.group(1))
            mask[i] = True
    return mask


@lru_cache(maxsize=8)
def lines_and_mask(text: str) -> tuple[list[str], list[bool]]:
    """A text's lines and their code mask, computed once per text (callers must not mutate them)."""
    lines = text.split("\n")
    return lines, code_mask(lines)


@lru_cache(maxsize=8)
def prose_lines(text: str) -> list[tuple[int, str]]:
    """(index, line) for every line outside code fences, inline code blanked (shared: do not mutate)."""
    lines, mask = lines_and_mask(text)
    out = []
    for i, line in enumerate(lines):
        if mask[i]:
            continue
        if "`" in line:
            line = blank_inline_code(line)
        out.append((i, line))
    return out


def blank_inline_code(line: str) -> str:
    """Replace inline code spans with spaces, keeping every other offset."""
    return _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
