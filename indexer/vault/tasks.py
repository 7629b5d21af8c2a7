"""Open Markdown tasks on a page: `- [ ] call Priya` (Obsidian's checkbox list item).

An unchecked task is something still to do, so an entity card counts it among
its open threads. A task may sit in a nested list or inside a callout or
blockquote (`> [!todo]` then `> - [ ] call the bank`, quotes nested as deep as
they go). A task inside a fenced code block is an example, not a task; a
checked one (`- [x]`) is done. A due date written the way the Obsidian Tasks
plugin writes it (`📅 2026-12-10`) or as a `due:: 2026-12-10` field is the
thread's date.
"""

from __future__ import annotations

import re

from .fences import code_mask

# any run of quote markers (`>`, `> >`, `>>`) ahead of the list item's bullet
_TASK = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+\[ \]\s+(\S.*?)\s*$")
_DUE = re.compile(r"(?:📅\ufe0f?|\[?due::)\s*(\d{4}-\d{2}-\d{2})\]?")


def task_on_line(line: str) -> tuple[str, str | None] | None:
    """(task text, due date YYYY-MM-DD or None) when the line is an unchecked task, else None.

    The caller has already left out lines inside code fences."""
    if "[ ]" not in line:
        return None
    m = _TASK.match(line)
    if not m:
        return None
    due = _DUE.search(m.group(1))
    return m.group(1), due.group(1) if due else None


def open_tasks(text: str) -> list[tuple[str, str | None]]:
    """(task text, due date YYYY-MM-DD or None) of each unchecked task, in page order."""
    lines = text.splitlines()
    out = []
    for line, is_code in zip(lines, code_mask(lines)):
        task = None if is_code else task_on_line(line)
        if task:
            out.append(task)
    return out
