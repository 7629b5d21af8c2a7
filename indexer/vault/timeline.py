"""Timeline entries (docs/protocol.md §8.4): dated bullets, dated headings, citations.

Forms:
  - **2024-03-01** | Source — Summary     (source + summary)
  - **2024-03-01** Summary                (source "markdown")
  - 2024-03-01: Summary, - [[2024-03-01]] Summary
  ### 2024-03-01 — Title                  (text up to the next heading = detail)
  … a sentence [Source: Crunchbase, 2024-03-01]   (inline citation)

Also the split of a body into its compiled truth (above the timeline) and
the timeline itself, which decides where a page's lead sentence comes from.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from .fences import lines_and_mask

SUMMARY_CHARS = 500
DETAIL_CHARS = 2000

_DATE = r"(\d{4}-\d{2}-\d{2})"
_BULLET = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?"        # list marker, optional task box
    r"(?:\*\*|__)?\[{0,2}" + _DATE + r"\]{0,2}(?:\*\*|__)?"  # the date, maybe bold or linked
    r"(?=\s|$|[|:—–,-])\s*(.*)$"
)
_HEADING = re.compile(r"^###\s+(?:\*\*)?\[{0,2}" + _DATE + r"\]{0,2}(?:\*\*)?(?=\s|$|[|:—–,-])\s*(.*)$")
_SECTION_END = re.compile(r"^#{1,3}\s")
_CITATION = re.compile(r"\[Source:\s*([^,\]\n]+?)\s*,\s*" + _DATE + r"\s*\]")
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
_LEAD_DELIM = re.compile(r"^(?:\||—|–|:|-(?=\s)|,)\s*")
_TIMELINE_H2 = re.compile(r"^##\s+(?:timeline|history)\s*#*\s*$", re.IGNORECASE)
_MARKER = re.compile(r"^\s*(?:<!--\s*timeline\s*-->|---\s*timeline\s*---)\s*$", re.IGNORECASE)


@dataclass(slots=True)
class Entry:
    date: str            # YYYY-MM-DD
    source: str          # "markdown" unless the entry names one
    summary: str
    detail: str | None = None


def _valid(date: str) -> bool:
    try:
        _dt.date.fromisoformat(date)
        return True
    except ValueError:
        return False


def plain(text: str) -> str:
    """Inline Markdown as reading text: `[[T|label]]` → label, bold marks dropped."""
    text = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = text.replace("**", "").replace("__", "")
    return " ".join(text.split())


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _bullet_entry(date: str, rest: str) -> Entry:
    rest = rest.strip()
    had_pipe = rest.startswith("|")
    rest = _LEAD_DELIM.sub("", rest, count=1)
    source = "markdown"
    if had_pipe:
        for sep in (" — ", " – ", " -- "):
            if sep in rest:
                src, rest = rest.split(sep, 1)
                source = plain(src) or "markdown"
                break
    return Entry(date, source, _clip(plain(rest), SUMMARY_CHARS))


def extract_entries(body: str) -> list[Entry]:
    """All timeline entries of a body, in the order they appear."""
    lines, mask = lines_and_mask(body)
    entries: list[Entry] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if mask[i] or not line.strip():
            i += 1
            continue
        m = _HEADING.match(line)
        if m and _valid(m.group(1)):
            title = plain(_LEAD_DELIM.sub("", m.group(2).strip(), count=1))
            j = i + 1
            detail_lines = []
            while j < n and not (not mask[j] and _SECTION_END.match(lines[j])):
                detail_lines.append(lines[j])
                j += 1
            detail = "\n".join(detail_lines).strip() or None
            summary = title or (plain(detail.split("\n", 1)[0]) if detail else m.group(1))
            entries.append(Entry(m.group(1), "markdown", _clip(summary, SUMMARY_CHARS),
                                 _clip(detail, DETAIL_CHARS) if detail else None))
            i = j
            continue
        m = _BULLET.match(line)
        if m and _valid(m.group(1)):
            entries.append(_bullet_entry(m.group(1), m.group(2)))
            i += 1
            continue
        if "[Source:" in line:
            for c in _CITATION.finditer(line):
                if _valid(c.group(2)):
                    text = plain(_CITATION.sub("", line).lstrip(" \t-*+>"))
                    entries.append(Entry(c.group(2), plain(c.group(1)), _clip(text, SUMMARY_CHARS)))
        i += 1
    return entries


def split_timeline(body: str) -> tuple[str, str]:
    """(compiled truth, timeline) per §8.4; the timeline is "" when there is none."""
    lines, mask = lines_and_mask(body)
    for i, line in enumerate(lines):
        if mask[i]:
            continue
        if _MARKER.match(line):
            return "\n".join(lines[:i]), "\n".join(lines[i + 1:])
        if line.strip() == "---" and any(x.strip() for x in lines[:i]):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _TIMELINE_H2.match(lines[j]):
                return "\n".join(lines[:i]), "\n".join(lines[j:])
    for i, line in enumerate(lines):
        if mask[i] or not _TIMELINE_H2.match(line):
            continue
        j = i + 1
        only_dated = True
        in_detail = False  # text under a dated ### heading is that entry's detail
        while j < len(lines) and not (not mask[j] and re.match(r"^#{1,2}\s", lines[j])):
            s = lines[j]
            if not mask[j] and s.startswith("###"):
                in_detail = bool(_HEADING.match(s))
                if not in_detail:
                    only_dated = False
                    break
            elif s.strip() and not in_detail and not (_BULLET.match(s) or s.startswith((" ", "\t"))):
                only_dated = False
                break
            j += 1
        if only_dated:
            return "\n".join(lines[:i]), "\n".join(lines[i:])
    return body, ""
