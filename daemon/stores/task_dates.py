"""The dates undated open tasks were first seen (docs/architecture.md, "Open tasks").

A task without a due date is dated by when it was first seen on its page, so it
does not jump to "now" at every edit of the page. The store keeps that first
date, keyed by the page and the task's words; it never fails a read (a store it
cannot read answers with the page's date).
"""

from __future__ import annotations

from typing import Protocol


class TaskDatesStore(Protocol):
    def first_seen(self, page: str, tasks: list[str], seen: str) -> dict[str, str]:
        """task text → the date it was first seen on `page`; the tasks seen for the first time
        now are recorded with `seen` (the page's last change)."""
        ...
